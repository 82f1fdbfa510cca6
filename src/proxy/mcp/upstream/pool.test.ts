import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import { endpointKey, UpstreamPool } from './pool.ts';

const service: McpTargetIR = {
  name: 'svc', host: 'everything.ai.svc.cluster.local', port: 80, path: '/mcp', protocol: 'StreamableHTTP',
  endpoints: [{ host: '10.0.0.1', port: 3001 }, { host: 'fd00::2', port: 3001 }, { host: '10.0.0.3', port: 3001 }],
};
const byName: McpTargetIR = { name: 'named', host: 'mcp.example.com', port: 443, path: '/mcp', protocol: 'StreamableHTTP' };

describe('UpstreamPool endpoints', () => {
  const pool = new UpstreamPool([service, byName]);
  after(() => pool.close());

  it('keys endpoints as host:port, IPv6 bracketed', () => {
    assert.deepEqual(service.endpoints?.map(endpointKey), ['10.0.0.1:3001', '[fd00::2]:3001', '10.0.0.3:3001']);
  });

  it('hands new sessions the endpoints in turn; a target without endpoints gets none', () => {
    assert.deepEqual([1, 2, 3, 4].map(() => pool.pick(service)), ['10.0.0.1:3001', '[fd00::2]:3001', '10.0.0.3:3001', '10.0.0.1:3001']);
    assert.equal(pool.pick(byName), undefined);
  });

  const reachable = [
    { name: 'a pinned endpoint still in the config', target: service, ep: '10.0.0.3:3001', expected: true },
    { name: 'a pinned endpoint that left the config', target: service, ep: '10.0.0.9:3001', expected: false },
    { name: 'a session opened by host name', target: service, ep: undefined, expected: true },
    { name: 'a pinned endpoint of a target that lost its endpoints', target: byName, ep: '10.0.0.1:3001', expected: false },
  ];
  for (const c of reachable) it(`reachable: ${c.name}`, () => assert.equal(pool.reachable(c.target, c.ep), c.expected));

  it('a resumed client talks to its pinned endpoint with the target host as Host', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(202).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const local: McpTargetIR = { ...service, endpoints: [{ host: '10.255.255.1', port: 9 }, { host: '127.0.0.1', port }] };
    const own = new UpstreamPool([local]);
    try {
      const client = own.streamable(local, { sid: 'up-1', pv: '2025-06-18', ep: `127.0.0.1:${port}` });
      assert.equal(client.endpoint, `127.0.0.1:${port}`);
      await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.equal(seen.length, 1);
      assert.equal(seen[0].host, 'everything.ai.svc.cluster.local:80');
      assert.equal(seen[0]['mcp-session-id'], 'up-1');
      assert.throws(() => own.streamable(local, { sid: 'up-2', pv: '2025-06-18', ep: '10.0.0.9:1' }), /no endpoint/);
    } finally {
      await own.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
