import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import type { LLMProvider, RouteType } from '../../../ir/ai.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { compileTracing } from './compile.ts';
import { llmAttemptSpan, providerName } from './genai.ts';
import { mcpAttributes } from './mcp.ts';
import { runTraced, startRequestTrace } from './request-trace.ts';

const REQ = { method: 'POST', url: '/v1/x', httpVersion: '1.1', headers: {}, socket: {} } as unknown as DownstreamRequest;
const NAMES = { gateway: '', listener: '', route: '', backend: '' };

/** Runs `attempt` inside a traced request; returns the attempt span and the request span. */
async function traced(route: RouteType, attempt: (span: NonNullable<ReturnType<typeof llmAttemptSpan>>) => void): Promise<{ call: ReadableSpan; request: ReadableSpan }> {
  const exporter = new InMemorySpanExporter();
  const tracing = compileTracing({ url: 'http://x', randomSampling: 'true' }, { endpoint: () => 'http://x', exporter }, () => undefined);
  assert.ok(tracing);
  const t = startRequestTrace(tracing, REQ, 'http');
  assert.ok(t);
  runTraced(t, () => {
    const span = llmAttemptSpan({ name: 'main', provider: { providerA: {} } }, route);
    assert.ok(span);
    attempt(span);
  });
  t.end(200, NAMES);
  await tracing.provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  await tracing.provider.shutdown();
  const call = spans.find((s) => s.parentSpanContext !== undefined);
  const request = spans.find((s) => s.parentSpanContext === undefined);
  assert.ok(call && request);
  return { call, request };
}

const answers: readonly { name: string; route: RouteType; body?: string; chunks?: readonly string[]; model?: string; id?: string; finish?: readonly string[] }[] = [
  {
    name: 'OpenAI chat completion', route: 'Completions',
    body: '{"id":"chatcmpl-1","model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"},{"index":1,"finish_reason":"length"}]}',
    model: 'gpt-4o-2024-08-06', id: 'chatcmpl-1', finish: ['stop', 'length'],
  },
  {
    name: 'Anthropic message', route: 'Messages',
    body: '{"id":"msg_1","type":"message","model":"claude-sonnet-4","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"}',
    model: 'claude-sonnet-4', id: 'msg_1', finish: ['end_turn'],
  },
  {
    name: 'a stream cut at arbitrary boundaries, the last line without its newline', route: 'Completions',
    chunks: ['data: {"id":"c', 'hatcmpl-s","model":"gpt-4o', '-mini","choices":[{"finish_reason":null}]}\n\n', 'data: {"choices":[{"finish_r', 'eason":"tool_calls"}]}'],
    model: 'gpt-4o-mini', id: 'chatcmpl-s', finish: ['tool_calls'],
  },
  { name: 'an answer naming none of them', route: 'Embeddings', body: '{"object":"list","data":[]}' },
];

for (const row of answers) {
  test(`GenAI answer attributes: ${row.name}`, async () => {
    const { call, request } = await traced(row.route, (span) => {
      if (row.body !== undefined) span.body(Buffer.from(row.body));
      for (const c of row.chunks ?? []) span.chunk(Buffer.from(c));
      span.end({ status: 200 });
    });
    for (const s of [call, request]) {
      assert.equal(s.attributes['gen_ai.response.model'], row.model);
      assert.deepEqual(s.attributes['gen_ai.response.finish_reasons'], row.finish);
    }
    assert.equal(call.attributes['gen_ai.response.id'], row.id);
    assert.equal(call.attributes['gen_ai.response.time_to_first_chunk'] !== undefined, row.chunks !== undefined);
  });
}

test('GenAI request and usage attributes; the attempt span is named after operation and model and writes its traceparent', async () => {
  const headers: Record<string, unknown> = {};
  const { call, request } = await traced('Completions', (span) => {
    span.request('gpt-4o', true, headers, { host: 'api.example:443' });
    span.usage({ inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4, reasoningTokens: 2 });
    span.end({ status: 200 });
  });
  assert.equal(call.name, 'chat gpt-4o');
  assert.equal(headers.traceparent, `00-${call.spanContext().traceId}-${call.spanContext().spanId}-01`);
  for (const s of [call, request]) {
    assert.equal(s.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(s.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(s.attributes['gen_ai.request.model'], 'gpt-4o');
    assert.equal(s.attributes['gen_ai.request.stream'], true);
    assert.equal(s.attributes['gen_ai.usage.input_tokens'], 10);
    assert.equal(s.attributes['gen_ai.usage.output_tokens'], 5);
    assert.equal(s.attributes['gen_ai.usage.cache_read.input_tokens'], 4);
    assert.equal(s.attributes['gen_ai.usage.reasoning.output_tokens'], 2);
  }
  assert.equal(call.attributes['server.address'], 'api.example:443');
});

test('a failed attempt does not give its answer facts to the request span', async () => {
  const { call, request } = await traced('Completions', (span) => {
    span.body(Buffer.from('{"model":"m1","choices":[{"finish_reason":"stop"}]}'));
    span.end({ error: new Error('reset') });
  });
  assert.equal(call.attributes['gen_ai.response.model'], 'm1');
  assert.equal(request.attributes['gen_ai.response.model'], undefined);
});

const providers: readonly [string, LLMProvider, string][] = [
  ['providerA', { providerA: {} }, 'openai'],
  ['providerB', { providerB: { endpoint: 'https://x' } }, 'azure.ai.openai'],
  ['providerC', { providerC: { resourceName: 'r', resourceType: 'ResourceTypeA' } }, 'azure.ai.inference'],
  ['providerD', { providerD: {} }, 'anthropic'],
  ['providerE', { providerE: {} }, 'gcp.gemini'],
  ['providerF', { providerF: { projectId: 'p', region: 'r' } }, 'gcp.vertex_ai'],
  ['providerG', { providerG: {} }, 'aws.bedrock'],
  ['custom', { custom: { formats: [] } }, 'custom'],
];
for (const [name, provider, want] of providers) test(`gen_ai.provider.name: ${name}`, () => assert.equal(providerName(provider), want));

const mcpRows: readonly { name: string; message: Parameters<typeof mcpAttributes>[0]; want: Record<string, unknown> }[] = [
  {
    name: 'tools/call', message: { method: 'tools/call', id: 7, params: { name: 'echo' } },
    want: { 'mcp.method.name': 'tools/call', 'jsonrpc.request.id': '7', 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool' },
  },
  { name: 'prompts/get', message: { method: 'prompts/get', id: 'a', params: { name: 'greet' } }, want: { 'mcp.method.name': 'prompts/get', 'jsonrpc.request.id': 'a', 'gen_ai.prompt.name': 'greet' } },
  { name: 'resources/read', message: { method: 'resources/read', id: 1, params: { uri: 'file:///x' } }, want: { 'mcp.method.name': 'resources/read', 'jsonrpc.request.id': '1', 'mcp.resource.uri': 'file:///x' } },
  { name: 'a notification', message: { method: 'notifications/initialized' }, want: { 'mcp.method.name': 'notifications/initialized' } },
  { name: 'tools/call without a name', message: { method: 'tools/call', id: 2, params: {} }, want: { 'mcp.method.name': 'tools/call', 'jsonrpc.request.id': '2' } },
  { name: 'a response (no method)', message: { id: 3 }, want: {} },
];
for (const row of mcpRows) test(`MCP attributes: ${row.name}`, () => assert.deepEqual(mcpAttributes(row.message), row.want));
