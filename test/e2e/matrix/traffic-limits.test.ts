/**
 * Member × kind matrix, traffic members that bound or replace the exchange: rateLimit (local and
 * global), timeouts, retry, delay, directResponse — on a Service, an `ai` and an `mcp` backend. A
 * gateway 429 reaches the Anthropic SDK as `rate_limit_error` in Anthropic's envelope, the OpenAI
 * SDK in OpenAI's and the MCP SDK as a JSON-RPC error (support.ts says how the matrix is built).
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { RateLimitUnit } from '../../../src/proxy/ext/gen/envoy/type/v3/ratelimit_unit_pb.js';
import { startRateLimitService, type RunningRateLimitService } from '../../ext/rate-limit-service.ts';
import { startEchoServer, type EchoServer } from '../../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { startMcpTarget, startProvider, type RecordingServer } from './doubles.ts';
import {
  assertAccepted, assertAnthropicError, assertGatewayError, assertJsonRpcRefusal, assertOpenAIError, Clients, failure, matrixYaml, nothingReaches, perKind, runRows, type Row, type Variant,
} from './support.ts';

const MCP_INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Waits until `check` holds, up to `ms`. */
async function eventually(check: () => boolean, ms = 1000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; await new Promise((ok) => setTimeout(ok, 20))) if (check()) return true;
  return check();
}

describe('member × kind matrix: rateLimit, timeouts, retry, delay, directResponse', () => {
  let echo: EchoServer;
  let provider: RecordingServer;
  let target: RecordingServer;
  let rls: RunningRateLimitService;
  let gw: GatewayHarness;
  let clients: Clients;
  const rawMcp = (variant: string, headers: Record<string, string> = {}) => fetch(gw.url(80, `/${variant}/mcp`), { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: MCP_INIT });

  before(async () => {
    [echo, provider, target, rls] = await Promise.all([
      startEchoServer('echo'), startProvider(), startMcpTarget(),
      startRateLimitService({ rules: () => ({ requestsPerUnit: 1, unit: RateLimitUnit.HOUR }) }),
    ]);
    const variants: Variant[] = [
      { name: 'rl-local', traffic: { rateLimit: { local: [{ requests: 1, unit: 'Hours' }] } } },
      // Each kind's requests carry their own `x-who`, so the service counts them apart.
      { name: 'rl-global', traffic: { rateLimit: { global: { url: rls.url, domain: 'matrix', descriptors: [{ entries: [{ name: 'who', expression: 'request.headers["x-who"]' }] }] } } } },
      { name: 'timeouts', traffic: { timeouts: { request: '500ms' } } },
      { name: 'retry', traffic: { retry: { codes: [503], attempts: 2, backoff: '10ms' } } },
      { name: 'delay', traffic: { delay: { duration: '300' } } },
      { name: 'direct', traffic: { directResponse: { status: 503, body: 'maintenance' } } },
    ];
    gw = await startGateway(matrixYaml({ echo, provider, target }, variants));
    assert.deepEqual(gw.applyErrors, []);
    clients = new Clients(gw);
  });
  after(async () => {
    await clients?.close();
    await gw?.close();
    await Promise.all([echo?.close(), provider?.stop(), target?.stop(), rls?.close()]);
  });

  const rows: Row[] = [
    ...perKind('rateLimit.local (1 request an hour: the second gets 429, nothing upstream)', {
      svc: async () => {
        assert.equal((await clients.svc('rl-local')).status, 200);
        const res = await nothingReaches(echo, () => clients.svc('rl-local'));
        assertGatewayError(res, 429, 'rate_limited');
        assert.ok(res.headers['retry-after']);
      },
      ai: async () => {
        assert.equal((await clients.chat('rl-local')).text, 'hello');
        const a = await nothingReaches(provider, () => failure(clients.message('rl-local')));
        assertAnthropicError(a, 429, 'rate_limit_error');
        const o = await nothingReaches(provider, () => failure(clients.chat('rl-local')));
        assertOpenAIError(o, 429, 'rate_limit_error', 'rate_limited');
        assert.ok((o as { headers?: Headers }).headers?.get('retry-after'), 'retry-after kept');
      },
      mcp: async () => {
        const first = await rawMcp('rl-local');
        assert.equal(first.status, 200);
        await first.body?.cancel();
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('rl-local'))), 429, -32001, 'rate_limited');
      },
    }),
    ...perKind('rateLimit.global (the service grants 1 an hour: the second gets 429, nothing upstream)', {
      svc: async () => {
        assert.equal((await clients.svc('rl-global', { headers: { 'x-who': 'svc' } })).status, 200);
        assertGatewayError(await nothingReaches(echo, () => clients.svc('rl-global', { headers: { 'x-who': 'svc' } })), 429, 'rate_limited');
      },
      ai: async () => {
        const who = { 'x-who': 'ai' };
        assert.equal((await clients.chat('rl-global', { headers: who })).text, 'hello');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('rl-global', { headers: who }))), 429, 'rate_limit_error');
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('rl-global', { headers: who }))), 429, 'rate_limit_error', 'rate_limited');
        assert.equal(rls.count('matrix', [['who', 'ai']]), 3, 'the service counted every request');
      },
      mcp: async () => {
        const first = await rawMcp('rl-global', { 'x-who': 'mcp' });
        assert.equal(first.status, 200);
        await first.body?.cancel();
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('rl-global', { 'x-who': 'mcp' }))), 429, -32001, 'rate_limited');
      },
    }),
    ...perKind('timeouts.request 500ms (504 at the deadline, the upstream request cut)', {
      svc: async () => {
        const started = Date.now();
        assertGatewayError(await clients.svc('timeouts', { path: '?delay=2000' }), 504, 'request_timeout');
        assert.ok(Date.now() - started < 1500, 'answered at the deadline');
      },
      ai: async () => {
        const aborted = provider.aborted.length;
        const started = Date.now();
        assertOpenAIError(await failure(clients.chat('timeouts', { model: 'slow' })), 504, 'server_error', 'request_timeout');
        assert.ok(Date.now() - started < 1500, 'answered at the deadline');
        assert.ok(await eventually(() => provider.aborted.length > aborted), 'the provider request was cut');
      },
      mcp: async () => {
        const { client } = await clients.mcp('timeouts');
        const aborted = target.aborted.length;
        const started = Date.now();
        const err = await failure(client.callTool({ name: 'slow', arguments: {} }));
        assert.ok(Date.now() - started < 1500, `answered at the deadline: ${String(err)}`);
        assertJsonRpcRefusal(err, 504, -32603, 'request_timeout');
        assert.ok(await eventually(() => target.aborted.length > aborted), 'the target request was cut');
      },
    }),
    ...perKind('retry (codes [503], attempts 2: a 503 is retried)', {
      svc: async () => {
        const seen = echo.seen.length;
        assert.equal((await clients.svc('retry', { path: '?status=503' })).status, 503);
        assert.ok(echo.seen.length - seen > 1, `retried: ${echo.seen.length - seen} attempts`);
        assertAccepted(gw, 'retry-svc');
      },
      // One provider: the retry goes to it again after the backoff (docs/llm.md, failover and retry).
      ai: async () => {
        const seen = provider.seen.length;
        assert.equal((await clients.chat('retry', { model: 'flaky' })).text, 'hello', 'the 503 was retried');
        assert.deepEqual(provider.seen.slice(seen).map((r) => r.what), ['flaky', 'flaky'], 'one 503, then the retry');
        assertAccepted(gw, 'retry-ai');
      },
      // The tools/call POST the target refused with 503 is sent again (docs/mcp.md "Retries").
      mcp: async () => {
        const seen = target.seen.length;
        assert.equal((await clients.callTool('retry', {}, 'flaky')).text, 'matrix', 'the 503 was retried');
        assert.equal(target.seen.slice(seen).filter((r) => r.tool === 'flaky').length, 2, 'one 503, then the retry');
        assertAccepted(gw, 'retry-mcp');
      },
    }),
    ...perKind('delay 300ms (the answer comes after the delay)', {
      svc: async () => {
        const started = Date.now();
        assert.equal((await clients.svc('delay')).status, 200);
        assert.ok(Date.now() - started >= 290, `delayed: ${Date.now() - started} ms`);
      },
      ai: async () => {
        const started = Date.now();
        assert.equal((await clients.chat('delay')).text, 'hello');
        assert.ok(Date.now() - started >= 290, `delayed: ${Date.now() - started} ms`);
      },
      mcp: async () => {
        const started = Date.now();
        const res = await rawMcp('delay');
        assert.equal(res.status, 200);
        await res.body?.cancel();
        assert.ok(Date.now() - started >= 290, `delayed: ${Date.now() - started} ms`);
        assert.equal((await clients.callTool('delay')).text, 'matrix');
      },
    }),
    ...perKind('directResponse 503 "maintenance" (answered by the gateway, nothing upstream)', {
      svc: async () => {
        const res = await nothingReaches(echo, () => clients.svc('direct'));
        assert.equal(res.status, 503);
        assert.equal(res.text, 'maintenance');
      },
      ai: async () => {
        const o = await nothingReaches(provider, () => failure(clients.chat('direct')));
        assert.equal((o as { status?: number }).status, 503, String(o));
        assert.match(String(o), /maintenance/);
        const a = await nothingReaches(provider, () => failure(clients.message('direct')));
        assert.equal((a as { status?: number }).status, 503, String(a));
      },
      mcp: async () => {
        const err = await nothingReaches(target, () => failure(clients.mcp('direct')));
        assert.equal((err as { code?: number }).code, 503, String(err));
        assert.match(String(err), /maintenance/);
      },
    }),
  ];
  runRows(rows);
});
