import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpGuardrail, Phase, type CheckRequest } from '../../src/proxy/mcp/guardrails/gen/guardrail_pb.js';
import { startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { backend, closedPort, connect, startEverything, startGateway, target, type Gateway, type Upstream } from './support.ts';

/**
 * Guardrail processors over proto/mcp/guardrail.proto: a real connect-node gRPC processor, a real
 * server-everything target and the official SDK client through the MCP handler.
 */
describe('MCP guardrails', () => {
  let upstream: Upstream;
  let processor: RunningServer;
  let gw: Gateway;
  const seen: CheckRequest[] = [];

  before(async () => {
    upstream = await startEverything();
    processor = await startGrpcServer((router) => router.service(McpGuardrail, {
      check(req) {
        seen.push(req);
        const params = JSON.parse(req.paramsJson) as { arguments?: { message?: string } };
        if (req.phase === Phase.REQUEST && params.arguments?.message === 'forbidden') {
          return { decision: { case: 'reject', value: { code: -32602, message: 'blocked by policy', dataJson: '{"rule":"no-forbidden"}' } } };
        }
        if (req.phase === Phase.REQUEST && params.arguments?.message === 'rewrite me') {
          return { decision: { case: 'mutate', value: { paramsJson: JSON.stringify({ ...params, arguments: { message: 'rewritten' } }), resultJson: '' } } };
        }
        if (req.phase === Phase.RESPONSE && req.method === 'tools/list') {
          const result = JSON.parse(req.resultJson) as { tools: { name: string }[] };
          return { decision: { case: 'mutate', value: { paramsJson: '', resultJson: JSON.stringify({ ...result, tools: result.tools.filter((t) => t.name.endsWith('echo')) }) } } };
        }
        return {};
      },
    }));
    const down = await closedPort();
    gw = await startGateway(backend([target('one', upstream)], {
      guardrails: [
        {
          url: processor.url, failureMode: 'FailClosed',
          methods: { 'tools/*': 'Request', 'tools/list': 'Response', '*': 'Off' },
          metadata: { caller: 'request.headers["x-caller"]', method: 'mcp.method' },
          disallowedRequestHeaders: ['authorization'],
        },
        // Unreachable, but only guards prompts and fails open.
        { url: `http://127.0.0.1:${down}`, failureMode: 'FailOpen', methods: { 'prompts/get': 'Full' } },
      ],
    }), (req) => ({ celContext: { request: { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers } } }));
  });

  after(async () => {
    await gw?.close();
    await processor?.close();
    await upstream?.stop();
  });

  it('lets a call through, with selected headers and evaluated metadata', async () => {
    seen.length = 0;
    const { client } = await connect(gw.url, { 'x-caller': 'agent-7', authorization: 'Bearer secret' });
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
      assert.match(JSON.stringify(result.content), /hello/);
    } finally {
      await client.close();
    }
    const call = seen.find((r) => r.method === 'tools/call');
    assert.ok(call, 'the processor saw tools/call');
    assert.equal(call.phase, Phase.REQUEST);
    assert.equal(call.target, 'one');
    assert.equal(call.metadata.caller, 'agent-7');
    assert.equal(call.metadata.method, 'tools/call');
    assert.equal(call.headers['x-caller'], 'agent-7');
    assert.equal(call.headers.authorization, undefined, 'disallowed headers are never forwarded');
    assert.ok(!seen.some((r) => r.method === 'tools/call' && r.phase === Phase.RESPONSE), 'tools/call is guarded at Request only');
  });

  it('rejects with the processor\'s JSON-RPC error and never reaches the target', async () => {
    const { client } = await connect(gw.url);
    try {
      await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'forbidden' } }), /blocked by policy/);
    } finally {
      await client.close();
    }
  });

  it('replaces request params and response results', async () => {
    const { client } = await connect(gw.url);
    try {
      const result = await client.callTool({ name: 'echo', arguments: { message: 'rewrite me' } });
      assert.match(JSON.stringify(result.content), /rewritten/);
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(names, ['echo']);
    } finally {
      await client.close();
    }
  });

  it('lets a message through an unreachable FailOpen processor', async () => {
    const { client } = await connect(gw.url);
    try {
      const prompt = await client.getPrompt({ name: 'simple-prompt' });
      assert.ok(prompt.messages.length > 0);
    } finally {
      await client.close();
    }
  });

  it('rejects when a FailClosed processor is unreachable', async () => {
    const down = await closedPort();
    const closed = await startGateway(backend([target('one', upstream)], { guardrails: [{ url: `http://127.0.0.1:${down}`, failureMode: 'FailClosed', methods: { 'tools/call': 'Request' } }] }));
    const { client } = await connect(closed.url);
    try {
      await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'x' } }), /guardrail unavailable/);
      assert.ok((await client.listTools()).tools.length > 1, 'unguarded methods pass');
    } finally {
      await client.close();
      await closed.close();
    }
  });
});
