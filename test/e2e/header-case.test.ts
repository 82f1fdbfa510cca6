/**
 * Frontend `http.http1HeaderCase` through YAML, checked on the bytes: a raw-socket HTTP/1.1 client
 * sends mixed-case header names, an upstream records the names it received (node's rawHeaders)
 * and answers with mixed-case names of its own. With Preserve (port 80) both directions keep the
 * spelling; with the default Lowercase (port 8081) the gateway sends lower-case names; HTTP/2
 * (which has only lower-case names) is unaffected.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, service } from '../support/manifests.ts';

const frontendPolicy = (port: number, http: unknown) => `---\n${stringify({
  apiVersion: 'switchboard.dev/v1alpha1',
  kind: 'ProxyPolicy',
  metadata: { name: `frontend-${port}`, namespace: 'default' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', port }], frontend: { http } },
})}`;

/** One request on a fresh connection (Connection: close), the raw answer once the gateway closes. */
function rawRequest(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error('no answer within 5 s'));
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(head);
  });
}

/** Header names as they appear on the wire, in order. */
const namesOf = (raw: string) => raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n').slice(1).map((line) => line.slice(0, line.indexOf(':')));

const REQUEST = 'GET /case HTTP/1.1\r\nHost: example.test\r\nX-Mixed-Case: 1\r\nACCEPT-language: en\r\nConnection: close\r\n\r\n';

describe('frontend http1HeaderCase', () => {
  let upstream: Server;
  let gw: GatewayHarness;
  const received: string[][] = [];

  before(async () => {
    upstream = createServer((req, res) => {
      received.push(req.rawHeaders.filter((_, i) => i % 2 === 0));
      res.writeHead(200, { 'X-Upstream-Header': 'u', 'Content-Type': 'text/plain', 'content-length': '2' }).end('ok');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as AddressInfo).port;
    gw = await startGateway(
      gatewayClass() + service('up', { host: '127.0.0.1', port }) + gateway('gw', [{ name: 'preserve', port: 80 }, { name: 'lower', port: 8081 }]) +
      prefixRoute('r', '/', 'up') + frontendPolicy(80, { http1HeaderCase: 'Preserve' }) + frontendPolicy(8081, { http1HeaderCase: 'Lowercase' }),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  const cases: { name: string; port: number; upstreamSees: string[]; clientSees: string[]; notSeen: string[] }[] = [
    {
      name: 'Preserve keeps the client\'s spelling upstream and the upstream\'s spelling downstream',
      port: 80,
      upstreamSees: ['X-Mixed-Case', 'ACCEPT-language'],
      clientSees: ['X-Upstream-Header', 'Content-Type'],
      notSeen: ['x-upstream-header', 'x-mixed-case'],
    },
    {
      name: 'Lowercase (the default spelling of node and undici) sends lower-case names both ways',
      port: 8081,
      upstreamSees: ['x-mixed-case', 'accept-language'],
      clientSees: ['x-upstream-header', 'content-type'],
      notSeen: ['X-Upstream-Header', 'X-Mixed-Case'],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const raw = await rawRequest(gw.portOf(c.port), REQUEST);
      assert.match(raw, /^HTTP\/1\.1 200 /);
      const up = received.at(-1) ?? [];
      for (const name of c.upstreamSees) assert.ok(up.includes(name), `upstream got ${JSON.stringify(up)}, wanted ${name}`);
      const down = namesOf(raw);
      for (const name of c.clientSees) assert.ok(down.includes(name), `client got ${JSON.stringify(down)}, wanted ${name}`);
      for (const name of c.notSeen) assert.ok(!up.includes(name) && !down.includes(name), `${name} should not appear`);
    });
  }

  it('HTTP/2 on a Preserve port is unaffected (lower-case names only)', async () => {
    const res = await gw.request2(80, { path: '/case', headers: { 'x-mixed-case': '1' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-upstream-header'], 'u');
    assert.ok((received.at(-1) ?? []).includes('x-mixed-case'));
  });
});
