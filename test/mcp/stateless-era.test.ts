import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { backend, startEverything, startGateway, target, type Gateway, type Upstream } from './support.ts';

/**
 * Clients of the stateless 2026-07-28 revision (the official SDK 2.x client pinned to it) through
 * the gateway to 2025-era server-everything targets: server/discover, per-request envelopes,
 * header validation, subscriptions/listen.
 */
describe('MCP stateless revision 2026-07-28', () => {
  let one: Upstream;
  let two: Upstream;
  let gw: Gateway;

  before(async () => {
    [one, two] = await Promise.all([startEverything(), startEverything()]);
    gw = await startGateway(backend([target('one', one), target('two', two)]));
  });

  after(async () => {
    await gw?.close();
    await Promise.all([one?.stop(), two?.stop()]);
  });

  async function modernClient(): Promise<Client> {
    const client = new Client({ name: 'modern-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    return client;
  }

  it('negotiates the stateless revision through server/discover and serves tools of both targets', async () => {
    const client = await modernClient();
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('one_echo') && names.includes('two_echo'), names.join(','));
      const result = await client.callTool({ name: 'two_echo', arguments: { message: 'no session' } });
      assert.match(JSON.stringify(result.content), /no session/);
    } finally {
      await client.close();
    }
  });

  it('answers server/discover without a session header', async () => {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), null);
    const body = await res.json() as { result: { supportedVersions: string[]; capabilities: Record<string, unknown> } };
    assert.ok(body.result.supportedVersions.includes('2026-07-28'));
    assert.ok(body.result.capabilities.tools);
  });

  it('rejects a request whose Mcp-Name header disagrees with the body', async () => {
    const res = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'one_echo' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'two_echo', arguments: { message: 'x' }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json() as { error: { code: number } }).error.code, -32020);
  });

  it('acknowledges a subscriptions/listen filter', async () => {
    const client = await modernClient();
    try {
      const subscription = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['one+demo://resource/static/document/architecture.md', 'nobody+x://y'] });
      assert.equal(subscription.honoredFilter.toolsListChanged, true);
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, ['one+demo://resource/static/document/architecture.md']);
      await subscription.close();
      assert.equal(await subscription.closed, 'local');
    } finally {
      await client.close();
    }
  });
});
