/**
 * Frontend policies on an HTTPS bind: a PROXY v2 header in the same segment as the TLS
 * ClientHello (what a load balancer relaying the first bytes does), the carried address as the
 * client address, and frontend.tls minProtocolVersion refusing older clients.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect, type SecureVersion } from 'node:tls';
import { stringify } from 'yaml';
import { createCertificate } from '../support/certs.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service, tlsSecret } from '../support/manifests.ts';

const doc = (o: unknown) => `---\n${stringify(o)}`;
const cert = await createCertificate(['secure.test']);

function proxyV2Header(address: string): Buffer {
  const signature = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
  const body = Buffer.from([...address.split('.').map(Number), 10, 0, 0, 1, 0x9c, 0x40, 0x01, 0xbb]);
  return Buffer.concat([signature, Buffer.from([0x21, 0x11, 0x00, body.length]), body]);
}

/** A relay that prepends a PROXY header to the first chunk it forwards, in one write. */
function startRelay(targetPort: number, address: string): Promise<Server> {
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.once('data', (first: Buffer) => {
      upstream.write(Buffer.concat([proxyV2Header(address), first]));
      client.pipe(upstream);
    });
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  relay.on('close', () => sockets.forEach((s) => s.destroy()));
  return new Promise((resolve) => relay.listen(0, '127.0.0.1', () => resolve(relay)));
}

function httpsGet(port: number, maxVersion: SecureVersion): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'secure.test', rejectUnauthorized: false, maxVersion });
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.once('secureConnect', () => socket.write('GET / HTTP/1.0\r\nHost: secure.test\r\n\r\n'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

describe('frontend policies on an HTTPS bind', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;
  let relay: Server;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + tlsSecret('cert', cert)
      + gateway('gw', [{ name: 'https', port: 443, protocol: 'HTTPS', certificates: ['cert'] }])
      + doc({
        apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'echo', port: 8080 }] }] },
      })
      + doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'fe', namespace: 'default' },
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }],
          frontend: { proxyProtocol: { version: 'V2', mode: 'Strict' }, tls: { minProtocolVersion: '1.3', handshakeTimeout: '5s' } },
        },
      }));
    assert.deepEqual(gw.applyErrors, []);
    relay = await startRelay(gw.portOf(443), '203.0.113.50');
  });
  after(async () => {
    await new Promise((resolve) => relay?.close(resolve));
    await gw?.close();
    await echo?.close();
  });

  it('takes the PROXY header arriving with the ClientHello and uses its address', async () => {
    const raw = await httpsGet((relay.address() as { port: number }).port, 'TLSv1.3');
    assert.match(raw, /^HTTP\/1\.1 200/);
    const echoed = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { headers: Record<string, string> };
    assert.equal(echoed.headers['x-forwarded-for'], '203.0.113.50');
  });

  it('refuses a client limited to TLS 1.2 when minProtocolVersion is 1.3', async () => {
    await assert.rejects(httpsGet((relay.address() as { port: number }).port, 'TLSv1.2'));
  });
});
