/**
 * frontend `tracing` end to end: a gateway built from YAML exports its spans to a test OTLP
 * receiver (OTLP/HTTP and OTLP/gRPC, decoded with the official opentelemetry-proto definitions).
 * An LLM request from the official openai client (buffered and streaming) and an MCP tools/call
 * from the MCP SDK client against server-everything arrive as spans under the client's
 * `traceparent`, with the GenAI and MCP semantic-convention attributes, and the upstream gets the
 * traceparent of its own attempt span.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, httpGateway, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { startHttpServer, type RunningServer } from '../ext/servers.ts';
import { keyedAiBackend, keysSecret, llmGatewayYaml } from '../llm/gateway-yaml.ts';
import { startMockProvider, streamFixture, type MockProvider } from '../llm/mock-provider.ts';
import { connect, startEverything, type Upstream } from '../mcp/support.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './receiver.ts';

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

/** The tracing ProxyPolicy; `endpoint` is the YAML of the OTLP endpoint (default the receiver's `url`). */
function tracingPolicy(receiver: OtlpReceiver, extra = '', endpoint = `url: ${receiver.url}`): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: tracing }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    tracing:
      ${endpoint}
      protocol: ${receiver.protocol}
      resources: [{ name: deployment.environment.name, expression: '"test"' }]
      attributes:
        - { name: app.user, expression: 'request.headers["x-user"]' }
        - { name: app.missing, expression: 'request.headers["x-not-sent"]' }
        - { name: app.model, expression: 'llm.requestModel' }
${extra}`;
}

/** A fresh client trace per test: 32 + 16 hex digits. */
function clientTrace(n: number): { traceId: string; spanId: string; traceparent: string } {
  const traceId = `${'ab'.repeat(15)}${n.toString(16).padStart(2, '0')}`;
  const spanId = `c0ffee${n.toString(16).padStart(2, '0')}c0ffee00`;
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function ofTrace(spans: readonly ReceivedSpan[], traceId: string): ReceivedSpan[] {
  return spans.filter((s) => s.traceId === traceId);
}

describe('tracing: LLM requests over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let provider: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    [receiver, provider] = await Promise.all([startOtlpReceiver('HTTP'), startMockProvider()]);
    gw = await startGateway(llmGatewayYaml([{ name: 'openai', prefix: '/openai' }], `
${keysSecret({ openai: 'sk-openai' })}---
${keyedAiBackend('openai', 'providerA: {}', provider)}---
${tracingPolicy(receiver)}`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([receiver?.close(), provider?.stop()]);
  });

  const openai = (traceparent: string) => new OpenAI({
    apiKey: 'client-key', baseURL: gw.url(80, '/openai/v1'), maxRetries: 0,
    defaultHeaders: { traceparent, tracestate: 'client=1', 'x-user': 'ada' },
  });

  it('the policy is Accepted: nothing about tracing is reported as not applied', () => {
    const status = gw.statusOf('ProxyPolicy', 'tracing');
    assert.doesNotMatch(JSON.stringify(status), /not (implemented|applied|supported)/i);
  });

  it('a buffered chat completion: request span under the client span, a GenAI attempt span, traceparent upstream', async () => {
    const client = clientTrace(1);
    provider.answer('/v1/chat/completions', {
      status: 200,
      body: {
        id: 'chatcmpl-t1', object: 'chat.completion', created: 1731000000, model: 'gpt-4o-2024-08-06',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, prompt_tokens_details: { cached_tokens: 4 } },
      },
    });
    const r = await openai(client.traceparent).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(r.choices[0].message.content, 'Hi');
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).length >= 2), client.traceId);
    const server = spans.find((s) => s.kind === SERVER);
    const attempt = spans.find((s) => s.kind === CLIENT);
    assert.ok(server && attempt, JSON.stringify(spans.map((s) => [s.name, s.kind])));
    assert.equal(server.parentSpanId, client.spanId, 'the request span continues the client trace');
    assert.equal(attempt.parentSpanId, server.spanId);
    assert.equal(server.traceState, 'client=1');
    assert.equal(server.attributes['http.response.status_code'], 200);
    assert.equal(server.attributes['app.user'], 'ada');
    assert.equal('app.missing' in server.attributes, false, 'a failing attribute expression drops only itself');
    assert.equal(server.attributes['app.model'], 'gpt-4o');
    assert.equal(server.resource['deployment.environment.name'], 'test');
    assert.equal(server.resource['service.name'], 'switchboard');
    assert.ok(receiver.contentTypes.length > 0 && receiver.contentTypes.every((t) => t === 'application/x-protobuf'), `OTLP/HTTP sends binary protobuf, as collectors expect by default: ${receiver.contentTypes.join(', ')}`);
    assert.equal(attempt.name, 'chat gpt-4o');
    for (const span of [attempt, server]) {
      assert.equal(span.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(span.attributes['gen_ai.provider.name'], 'openai');
      assert.equal(span.attributes['gen_ai.request.model'], 'gpt-4o');
      assert.equal(span.attributes['gen_ai.response.model'], 'gpt-4o-2024-08-06');
      assert.equal(span.attributes['gen_ai.request.stream'], false);
      assert.equal(span.attributes['gen_ai.usage.input_tokens'], 11);
      assert.equal(span.attributes['gen_ai.usage.output_tokens'], 2);
      assert.equal(span.attributes['gen_ai.usage.cache_read.input_tokens'], 4);
      assert.deepEqual(span.attributes['gen_ai.response.finish_reasons'], ['stop']);
    }
    assert.equal(attempt.attributes['gen_ai.response.id'], 'chatcmpl-t1');
    // The provider got the attempt span's context, not the client's.
    const sent = provider.requests.at(-1);
    assert.equal(sent?.headers.traceparent, `00-${client.traceId}-${attempt.spanId}-01`);
    assert.equal(sent?.headers.tracestate, 'client=1');
  });

  it('a streamed chat completion: streaming, time to first chunk, usage and finish reason', async () => {
    const client = clientTrace(2);
    provider.answer('/v1/chat/completions', streamFixture('openai-text-usage'));
    const stream = await openai(client.traceparent).chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Héllo wörld ✓');
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).length >= 2), client.traceId);
    const server = spans.find((s) => s.kind === SERVER);
    const attempt = spans.find((s) => s.kind === CLIENT);
    assert.ok(server && attempt);
    assert.equal(server.parentSpanId, client.spanId);
    assert.equal(attempt.attributes['gen_ai.request.stream'], true);
    assert.equal(attempt.attributes['gen_ai.response.model'], 'gpt-4o-2024-08-06');
    assert.deepEqual(attempt.attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(attempt.attributes['gen_ai.usage.input_tokens'], 9);
    assert.equal(attempt.attributes['gen_ai.usage.output_tokens'], 4);
    const ttfc = attempt.attributes['gen_ai.response.time_to_first_chunk'];
    assert.ok(typeof ttfc === 'number' && ttfc > 0 && ttfc < 10, `time to first chunk ${String(ttfc)}`);
    assert.equal(server.attributes['gen_ai.response.time_to_first_chunk'], ttfc);
  });

  it('a provider failure marks the attempt failed and the request span 5xx as an error', async () => {
    const client = clientTrace(3);
    provider.answer('/v1/chat/completions', { status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
    await assert.rejects(openai(client.traceparent).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }));
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).length >= 2), client.traceId);
    const server = spans.find((s) => s.kind === SERVER);
    const attempt = spans.find((s) => s.kind === CLIENT);
    assert.equal(attempt?.status, STATUS_ERROR);
    assert.equal(server?.status, STATUS_ERROR);
  });

  it('a request without a traceparent is not traced (randomSampling unset)', async () => {
    provider.answer('/v1/chat/completions', streamFixture('openai-text-usage'));
    const before = receiver.spans.length;
    const plain = new OpenAI({ apiKey: 'k', baseURL: gw.url(80, '/openai/v1'), maxRetries: 0 });
    const stream = await plain.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    for await (const _ of stream) { /* drain */ }
    // A traced request's spans would be exported within the batch delay (1 s): wait past it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(receiver.spans.length, before);
    assert.equal(provider.requests.at(-1)?.headers.traceparent, undefined);
  });
});

describe('tracing: MCP tools/call over OTLP/gRPC to a Service backendRef', () => {
  let receiver: OtlpReceiver;
  let everything: Upstream;
  let legacy: Upstream;
  let gw: GatewayHarness;

  before(async () => {
    [receiver, everything, legacy] = await Promise.all([startOtlpReceiver('GRPC'), startEverything(), startEverything('sse')]);
    gw = await startGateway(`
${httpGateway()}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp:
    targets:
      - { name: everything, static: { host: 127.0.0.1, port: ${everything.port} } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: legacy }
spec:
  mcp:
    targets:
      - { name: old, static: { host: 127.0.0.1, port: ${legacy.port}, protocol: SSE } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }]
    - matches: [{ path: { type: PathPrefix, value: /legacy } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: legacy }]
---
${service('otel', { host: '127.0.0.1', port: Number(new URL(receiver.url).port) }, { port: 4317 })}
---
${tracingPolicy(receiver, `        - { name: app.tool, expression: 'mcp.tool.name' }
`, 'backendRef: { name: otel, port: 4317 }')}`);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([receiver?.close(), everything?.stop(), legacy?.stop()]);
  });

  it('the tools/call request span and its target call span carry the MCP attributes under the client trace', async () => {
    const client = clientTrace(9);
    const { client: mcp } = await connect(gw.url(80, '/mcp'), { traceparent: client.traceparent });
    try {
      const result = await mcp.callTool({ name: 'echo', arguments: { message: 'traced' } });
      assert.match(JSON.stringify(result.content), /traced/);
    } finally {
      await mcp.close();
    }
    const isCall = (s: ReceivedSpan) => s.kind === SERVER && s.attributes['mcp.method.name'] === 'tools/call';
    const spans = ofTrace(await receiver.waitForSpans((all) => {
      const server = ofTrace(all, client.traceId).find(isCall);
      return server !== undefined && all.some((s) => s.parentSpanId === server.spanId);
    }), client.traceId);
    const server = spans.find(isCall);
    assert.ok(server);
    assert.equal(server.parentSpanId, client.spanId);
    assert.equal(server.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(server.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(server.attributes['switchboard.mcp.target'], 'everything');
    assert.equal(server.attributes['app.tool'], 'echo', 'CEL attributes see the mcp variables');
    const call = spans.find((s) => s.parentSpanId === server.spanId);
    assert.ok(call);
    assert.equal(call.kind, CLIENT);
    assert.equal(call.name, 'tools/call echo');
    assert.equal(call.attributes['mcp.method.name'], 'tools/call');
    assert.equal(call.attributes['gen_ai.tool.name'], 'echo');
    assert.equal(call.attributes['switchboard.mcp.target'], 'everything');
    assert.equal(call.attributes['http.response.status_code'], 200);
    // Every message of the session was traced under the client's trace (initialize too).
    assert.ok(spans.some((s) => s.kind === SERVER && s.attributes['mcp.method.name'] === undefined && s.attributes['http.request.method'] === 'POST'));
  });

  it('a legacy HTTP+SSE target: each message POSTed to it is a CLIENT span under the request span', async () => {
    const client = clientTrace(10);
    const { client: mcp } = await connect(gw.url(80, '/legacy'), { traceparent: client.traceparent });
    try {
      const result = await mcp.callTool({ name: 'echo', arguments: { message: 'old' } });
      assert.match(JSON.stringify(result.content), /old/);
    } finally {
      await mcp.close();
    }
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).some((s) => s.name === 'tools/call echo')), client.traceId);
    const call = spans.find((s) => s.name === 'tools/call echo');
    assert.ok(call);
    assert.equal(call.kind, CLIENT);
    assert.equal(call.attributes['switchboard.mcp.target'], 'old');
    assert.equal(spans.find((s) => s.spanId === call.parentSpanId)?.kind, SERVER);
  });
});

describe('tracing: a Service route with extAuth and retries over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let authz: RunningServer;
  let flaky: RunningServer;
  let gw: GatewayHarness;
  /** What the upstream and the authorization service saw: trace headers per request. */
  const upstreamTraceparents: (string | undefined)[] = [];

  before(async () => {
    receiver = await startOtlpReceiver('HTTP');
    authz = await startHttpServer((_req, _body, res) => res.writeHead(200).end());
    flaky = await startHttpServer((req, _body, res) => {
      upstreamTraceparents.push(req.headers.traceparent as string | undefined);
      // The first attempt fails with 503: traffic.retry sends it again.
      res.writeHead(upstreamTraceparents.length === 1 ? 503 : 200, { 'content-type': 'text/plain' }).end('ok');
    });
    gw = await startGateway(
      gatewayClass() + service('flaky', { host: '127.0.0.1', port: flaky.port }) + gateway('gw', [{ name: 'http', port: 80 }])
      + prefixRoute('svc', '/svc', 'flaky')
      + routeTrafficPolicy('svc', 'svc', `apiKeyAuthentication: { secretRef: { name: keys } }\nextAuth: { url: "${authz.url}", http: {} }\nretry: { codes: [503], attempts: 2, backoff: 10ms }`)
      + `---\napiVersion: v1\nkind: Secret\nmetadata: { name: keys, namespace: default }\nstringData: { team-a: sk-team-a }\n`
      + `---\n${tracingPolicy(receiver, "        - { name: app.key, expression: 'apiKey.name' }\n")}`,
    );
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([receiver?.close(), authz?.close(), flaky?.close()]);
  });

  it('the ext_authz call and each upstream attempt are CLIENT spans; each attempt sends its own traceparent', async () => {
    const client = clientTrace(5);
    const r = await gw.request(80, { path: '/svc/x', headers: { traceparent: client.traceparent, authorization: 'Bearer sk-team-a' } });
    assert.equal(r.status, 200);
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).length >= 4), client.traceId);
    const server = spans.find((s) => s.kind === SERVER);
    assert.ok(server);
    assert.equal(server.parentSpanId, client.spanId);
    assert.equal(server.attributes['app.key'], 'team-a', 'CEL attributes see the identity the policies established');
    const children = spans.filter((s) => s.parentSpanId === server.spanId);
    assert.deepEqual(children.map((s) => s.name).sort(), ['GET', 'GET', 'ext_authz']);
    const attempts = children.filter((s) => s.name === 'GET');
    assert.deepEqual(attempts.map((s) => s.attributes['http.response.status_code']).sort(), [200, 503]);
    assert.equal(attempts.find((s) => s.attributes['http.response.status_code'] === 503)?.status, STATUS_ERROR);
    assert.equal(attempts.find((s) => s.attributes['http.response.status_code'] === 200)?.attributes['http.request.resend_count'], 1);
    assert.deepEqual([...upstreamTraceparents].sort(), attempts.map((s) => `00-${client.traceId}-${s.spanId}-01`).sort());
  });
});
