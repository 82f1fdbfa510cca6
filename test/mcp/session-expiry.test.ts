import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { McpTargetIR } from '../../src/ir/mcp.ts';
import { startResourceFixture, type ResourceFixture } from './fixtures/resource-server.ts';
import { backend, connect, startGateway } from './support.ts';

/**
 * An upstream session that expired (the target answers 404 for the session id the gateway
 * session carries): the gateway answers 404 with a JSON-RPC error, so the client initialises
 * again (MCP's rule for an unknown session), and the new session works.
 */
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const LIST = { jsonrpc: '2.0', id: 2, method: 'resources/list', params: {} };
const NOTIFY = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };

function fixtureTarget(f: ResourceFixture): McpTargetIR {
  return { name: f.label, host: '127.0.0.1', port: f.port, path: '/mcp', protocol: 'StreamableHTTP' };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
}

async function initialize(url: string): Promise<string> {
  const res = await post(url, INIT);
  assert.equal(res.status, 200);
  await res.body?.cancel();
  const sid = res.headers.get('mcp-session-id');
  assert.ok(sid);
  return sid;
}

describe('MCP gateway: an upstream session that expired', () => {
  let alpha: ResourceFixture;
  let beta: ResourceFixture;
  before(async () => {
    [alpha, beta] = await Promise.all([startResourceFixture('alpha'), startResourceFixture('beta')]);
  });
  after(async () => {
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  it('answers 404 with a JSON-RPC error naming the cause; initializing again works', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha), fixtureTarget(beta)]));
    try {
      const sid = await initialize(gw.url);
      const before = await post(gw.url, LIST, { 'mcp-session-id': sid });
      assert.equal(before.status, 200);
      await before.body?.cancel();

      beta.expireSessions(); // one target of two forgets every session
      const cases = [
        { name: 'a request', body: LIST },
        { name: 'a batch', body: [LIST, { ...LIST, id: 3 }] },
      ];
      for (const c of cases) {
        const res = await post(gw.url, c.body, { 'mcp-session-id': sid });
        assert.equal(res.status, 404, c.name);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, c.name);
        const body = await res.json() as { jsonrpc: string; error: { code: number; message: string } };
        assert.equal(body.jsonrpc, '2.0', c.name);
        assert.equal(body.error.code, -32600, c.name);
        assert.equal(body.error.message, 'Session not found: an upstream session expired; initialize again', c.name);
      }
      // A notification has no answer to carry the news: accepted, and the next request says 404.
      const notified = await post(gw.url, NOTIFY, { 'mcp-session-id': sid });
      assert.equal(notified.status, 202);

      const fresh = await initialize(gw.url);
      assert.notEqual(fresh, sid);
      const after = await post(gw.url, LIST, { 'mcp-session-id': fresh, accept: 'application/json' });
      assert.equal(after.status, 200);
      const listed = await after.json() as { result: { resources: { uri: string }[] } };
      assert.ok(listed.result.resources.some((r) => r.uri === 'beta+beta://readme'), 'the new session reaches the target again');
    } finally {
      await gw.close();
    }
  });

  it('the SDK client sees the 404 as an error naming the session (it does not retry on its own)', async () => {
    const gw = await startGateway(backend([fixtureTarget(alpha)]));
    const { client } = await connect(gw.url);
    try {
      assert.ok((await client.listResources()).resources.length > 0);
      alpha.expireSessions();
      await assert.rejects(client.listResources(), /Session not found: an upstream session expired; initialize again/);
      const again = await connect(gw.url);
      try {
        assert.ok((await again.client.listResources()).resources.length > 0, 'a new connection initialises a new session');
      } finally {
        await again.client.close();
      }
    } finally {
      await client.close().catch(() => undefined);
      await gw.close();
    }
  });
});
