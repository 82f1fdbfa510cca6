/**
 * MCP calls are counted per target, method and tool: the MCP SDK client calls a tool of
 * server-everything through a gateway, and switchboard_mcp_calls_total has the call (and the
 * tools/list before it) under the target's name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { registerAiMetrics } from '../../src/proxy/telemetry/ai-metrics.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway, mcpToolsBackend } from '../support/manifests.ts';
import { connect, startEverything, type Upstream } from '../mcp/support.ts';

async function mcpCalls(labels: string): Promise<number> {
  const registry = new Registry();
  registerAiMetrics(registry);
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`switchboard_mcp_calls_total{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('MCP call metrics', () => {
  let everything: Upstream;
  let gw: GatewayHarness;

  before(async () => {
    everything = await startEverything();
    gw = await startGateway(`
${httpGateway()}${mcpToolsBackend({ everything: everything.port })}`);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await everything?.stop();
  });

  it('a tools/call counts under its target and tool, outcome ok', async () => {
    const labels = 'backend="backend/default/tools",target="everything",mcp_method_name="tools/call",gen_ai_tool_name="echo",outcome="ok"';
    const before = await mcpCalls(labels);
    const { client } = await connect(gw.url(80, '/mcp'));
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'counted' } });
      assert.ok(JSON.stringify(result).includes('counted'));
    } finally {
      await client.close();
    }
    assert.equal(await mcpCalls(labels) - before, 1);
  });
});
