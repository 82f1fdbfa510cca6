/**
 * Hostile MCP targets, through the real CLI with the official SDK client: a target that answers a
 * `tools/call` with one SSE event that never ends (64 MiB of data in small chunks), and one that
 * answers with a 64 MiB JSON body. The gateway's bounds (8 Mi characters per SSE event, 16 MiB
 * per JSON answer; docs/security.md) must turn each into a JSON-RPC error for the client promptly,
 * drop the target's connection before it has sent everything, keep ordinary requests on another
 * route prompt and keep the gateway's memory bounded. Both floods are valid JSON-RPC results once
 * complete, so without the bounds the call would succeed instead.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gateway, gatewayClass, mcpToolsBackend, prefixRoute, service } from '../support/manifests.ts';
import { PROMPT_MS, probeWhile, rssMiB, startHostileGateway, type HostileGateway } from './harness.ts';
import { settled } from './flood.ts';
import { FLOOD_BYTES, startHostileMcpServer, type HostileMcpServer } from './mcp-server.ts';

/** The client waits at most this long for its error (the flood takes far longer to send whole). */
const ERROR_WITHIN_MS = 5_000;
const RSS_GROWTH_MIB = 150;

describe('hostile MCP target answers', () => {
  let echo: EchoServer;
  let target: HostileMcpServer;
  let gw: HostileGateway;
  let client: Client;

  before(async () => {
    echo = await startEchoServer('echo');
    target = await startHostileMcpServer();
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}')
      + service('echo', echo) + prefixRoute('plain', '/plain', 'echo') + mcpToolsBackend({ hostile: target.port });
    gw = await startHostileGateway(yaml);
    client = new Client({ name: 'hostile-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${gw.port}/mcp`)));
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names.sort(), ['json_flood', 'ok', 'sse_flood']);
  });
  after(async () => {
    await client?.close();
    await gw?.close();
    await target?.close();
    await echo?.close();
  });

  const cases = [
    { name: 'a tools/call answered with one 64 MiB SSE event that never ends', tool: 'sse_flood' },
    { name: 'a tools/call answered with a 64 MiB application/json body', tool: 'json_flood' },
  ];
  for (const c of cases) {
    it(`${c.name}: a JSON-RPC error promptly, the target dropped, ordinary requests prompt, memory bounded`, async (t) => {
      await gw.request({ path: '/plain/warm' });
      const rssBefore = await rssMiB(gw.pid);
      const floodsBefore = target.floods.length;
      const t0 = performance.now();
      let errorAfterMs = Number.POSITIVE_INFINITY;
      const report = await probeWhile(
        () => client.callTool({ name: c.tool, arguments: {} }).finally(() => { errorAfterMs = performance.now() - t0; }),
        async () => {
          const res = await gw.request({ path: '/plain/probe' });
          assert.equal(res.status, 200, 'the ordinary request is served');
        },
        // The bounded call settles within ~100 ms: start probing at once so they overlap it.
        { warmupMs: 5 },
      );
      const rssAfter = await rssMiB(gw.pid);

      t.diagnostic(`settled after ${Math.round(errorAfterMs)} ms; worst of ${report.probes} probes ${Math.round(report.worstProbeMs)} ms; RSS ${Math.round(rssBefore)} → ${Math.round(rssAfter)} MiB`);
      assert.equal(report.hostile.status, 'rejected', `the call succeeded: ${JSON.stringify((report.hostile as PromiseFulfilledResult<unknown>).value)?.slice(0, 200)}`);
      const error = (report.hostile as PromiseRejectedResult).reason as unknown;
      assert.ok(error instanceof McpError, `a JSON-RPC error, not ${String(error)}`);
      assert.match(error.message, /target "hostile" failed/);
      assert.ok(errorAfterMs < ERROR_WITHIN_MS, `the client waited ${Math.round(errorAfterMs)} ms for its error`);
      assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${Math.round(report.worstProbeMs)} ms over ${report.probes} probes`);

      const called = target.floods[floodsBefore];
      assert.equal(called?.tool, c.tool, 'the target was called');
      const flood = called.record;
      await settled(flood);
      assert.ok(flood.cutOff && !flood.finished, `the gateway read ${flood.sent} of ${FLOOD_BYTES} bytes without dropping the target`);
      assert.ok(flood.sent < FLOOD_BYTES, `the target sent all ${flood.sent} bytes`);
      assert.ok(rssAfter - rssBefore < RSS_GROWTH_MIB, `RSS grew ${Math.round(rssBefore)} → ${Math.round(rssAfter)} MiB`);

      // The session and the gateway survive: the same client's next call to the target works.
      const fine = await client.callTool({ name: 'ok', arguments: {} });
      assert.deepEqual(fine.content, [{ type: 'text', text: 'fine' }]);
    });
  }
});
