import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEverything, connect, type Upstream } from '../mcp/support.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway, mcpToolsBackend } from '../support/manifests.ts';

/**
 * An MCP ProxyBackend served through the whole pipeline — YAML → translate → runtime → the MCP
 * handler — with two real server-everything upstreams and the official SDK client.
 */
describe('MCP backend through the gateway', () => {
  let one: Upstream;
  let two: Upstream;
  let gw: GatewayHarness;

  before(async () => {
    [one, two] = await Promise.all([startEverything(), startEverything()]);
    gw = await startGateway(httpGateway() + mcpToolsBackend({ one: one.port, two: two.port }, `
mcp:
  authorization:
    policy:
      matchExpressions: ['!has(mcp.tool) || mcp.tool.name != "echo" || mcp.tool.target == "one"']`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([one?.stop(), two?.stop()]);
  });

  it('reports the backend Accepted', () => {
    const conditions = gw.statusOf('ProxyBackend', 'tools').conditions as { type: string; status: string }[];
    assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True');
  });

  it('lists prefixed tools of both targets, filtered by authorization, and calls one', async () => {
    const { client } = await connect(gw.url(80, '/mcp'));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('one_echo'), names.join(','));
      assert.ok(!names.includes('two_echo'), 'authorization hides two_echo');
      assert.ok(names.some((n) => n.startsWith('two_')), 'the other tools of target two are listed');
      const result = await client.callTool({ name: 'one_echo', arguments: { message: 'through the gateway' } });
      assert.match(JSON.stringify(result.content), /through the gateway/);
    } finally {
      await client.close();
    }
  });
});
