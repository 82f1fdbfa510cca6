/**
 * Frontend policies through YAML, spoken to by a raw socket client: PROXY protocol v1 and v2
 * (the carried address becomes the client address), Strict and Optional modes, network
 * authorization on that address before any HTTP parsing, and CONNECT refused with 405.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

const doc = (o: unknown) => `---\n${stringify(o)}`;
const frontendPolicy = (name: string, port: number, frontend: unknown) => doc({
  apiVersion: 'switchboard.dev/v1alpha1',
  kind: 'ProxyPolicy',
  metadata: { name, namespace: 'default' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', port }], frontend },
});

/** HTTP/1.0 so the answer is not chunked and the raw body is the echo's JSON. */
const HTTP_GET = 'GET /who HTTP/1.0\r\nHost: example.test\r\n\r\n';

function proxyV1(address: string): Buffer {
  return Buffer.from(`PROXY TCP4 ${address} 10.0.0.1 40000 80\r\n`, 'latin1');
}

function proxyV2(address: string, port = 40000): Buffer {
  const signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
  const body = Buffer.alloc(12);
  address.split('.').forEach((octet, i) => body.writeUInt8(Number(octet), i));
  body.set([10, 0, 0, 1], 4);
  body.writeUInt16BE(port, 8);
  body.writeUInt16BE(80, 10);
  const header = Buffer.from([0x21, 0x11, 0x00, 12]); // v2 PROXY, TCP over IPv4, 12 bytes
  return Buffer.concat([signature, header, body]);
}

/** Sends bytes (in two writes, splitting the PROXY header) and reads until the gateway closes. */
function rawExchange(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(bytes.subarray(0, 7));
    setImmediate(() => socket.write(bytes.subarray(7)));
  });
}

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const forwardedFor = (raw: string) => {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return (JSON.parse(body) as { headers: Record<string, string> }).headers['x-forwarded-for'];
};

describe('frontend policies', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'strict', port: 80 }, { name: 'optional', port: 8081 }])
      + doc({
        apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [
          { backendRefs: [{ name: 'echo', port: 8080 }] },
          { name: 'buffered', matches: [{ path: { type: 'PathPrefix', value: '/buffered' } }], backendRefs: [{ name: 'echo', port: 8080 }] },
        ] },
      })
      + doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'buffering', namespace: 'default' },
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: 'buffered' }],
          backend: { transformation: { request: { body: 'string(request.body) + "!"' } } },
        },
      })
      + frontendPolicy('strict', 80, { proxyProtocol: { version: 'All', mode: 'Strict' } })
      + frontendPolicy('optional', 8081, {
        proxyProtocol: { version: 'V2', mode: 'Optional' },
        networkAuthorization: { action: 'Deny', policy: { matchExpressions: ["source.address == '198.51.100.9'"] } },
        tcp: { keepalive: { time: '30s' } },
        http: { maxBufferSize: '1Ki' },
      }));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const cases = [
    { name: 'PROXY v1 carries the client address', port: 80, bytes: Buffer.concat([proxyV1('203.0.113.7'), Buffer.from(HTTP_GET)]), status: 200, client: '203.0.113.7' },
    { name: 'PROXY v2 carries the client address', port: 80, bytes: Buffer.concat([proxyV2('203.0.113.8'), Buffer.from(HTTP_GET)]), status: 200, client: '203.0.113.8' },
    { name: 'Strict closes a connection without a header', port: 80, bytes: Buffer.from(HTTP_GET), status: 0 },
    { name: 'Optional serves a connection without a header', port: 8081, bytes: Buffer.from(HTTP_GET), status: 200, client: '127.0.0.1' },
    { name: 'Optional V2 takes the v2 header', port: 8081, bytes: Buffer.concat([proxyV2('192.0.2.44'), Buffer.from(HTTP_GET)]), status: 200, client: '192.0.2.44' },
    { name: 'network authorization denies by the carried address before HTTP', port: 8081, bytes: Buffer.concat([proxyV2('198.51.100.9'), Buffer.from(HTTP_GET)]), status: 0 },
    { name: 'CONNECT is refused with 405', port: 8081, bytes: Buffer.from('CONNECT upstream.test:443 HTTP/1.1\r\nHost: upstream.test:443\r\n\r\n'), status: 405 },
  ];
  it('maxBufferSize bounds the body a policy buffers', async () => {
    const small = await gw.request(8081, { path: '/buffered', method: 'POST', body: 'hello' });
    assert.equal(small.status, 200, small.text);
    assert.equal(small.echo().bodyLength, 'hello!'.length);
    const large = await gw.request(8081, { path: '/buffered', method: 'POST', body: 'x'.repeat(2048) });
    assert.equal(large.status, 413, large.text);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const raw = await rawExchange(gw.portOf(c.port), c.bytes);
      assert.equal(statusOf(raw), c.status, raw);
      if (c.client !== undefined) assert.equal(forwardedFor(raw), c.client);
    });
  }
});
