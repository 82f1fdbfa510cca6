/**
 * Tracing of what outlives one exchange (docs/observability.md, "Spans"): an OpenAI Realtime
 * session is a GenAI CLIENT span from the provider handshake (which carries its traceparent) to the
 * session's end, with the session's token usage; a Streamable HTTP GET stream of an MCP session is
 * a CLIENT span per target's server stream, ended when the stream ends — and so is each target
 * stream of a legacy HTTP+SSE client session, under its `initialize`. Through a listening gateway
 * exporting to the test OTLP receiver (every request sampled); a plain `ws` client and the MCP SDK
 * client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { REALTIME_USAGE, startMockRealtime, type MockRealtime } from '../llm/mock-realtime.ts';
import { connect, connectSse, startEverything, type Upstream } from '../mcp/support.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './receiver.ts';

const SERVER = 2;
const CLIENT = 3;

function tracingPolicy(receiver: OtlpReceiver): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: tracing }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    tracing: { url: ${receiver.url}, protocol: ${receiver.protocol}, randomSampling: 'true' }
`;
}

function clientTrace(n: number): { traceId: string; spanId: string; traceparent: string } {
  const traceId = `${'cd'.repeat(15)}${n.toString(16).padStart(2, '0')}`;
  const spanId = `beef00${n.toString(16).padStart(2, '0')}beef0000`;
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const ofTrace = (spans: readonly ReceivedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);

describe('tracing: long-lived sessions over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let realtime: MockRealtime;
  let everything: Upstream;
  let gw: GatewayHarness;

  before(async () => {
    [receiver, realtime, everything] = await Promise.all([startOtlpReceiver('HTTP'), startMockRealtime((h) => h.authorization === 'Bearer sk-gateway'), startEverything()]);
    gw = await startGateway(`${httpGateway()}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: routes }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /rt } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: rt }]
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: rt }
spec:
  ai:
    provider: { providerA: {}, host: ${realtime.host}, port: ${realtime.port} }
  policies:
    auth: { key: sk-gateway }
    ai: { routes: { /v1/realtime: Realtime } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp:
    targets:
      - { name: everything, static: { host: 127.0.0.1, port: ${everything.port} } }
---
${tracingPolicy(receiver)}`);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([receiver?.close(), realtime?.stop(), everything?.stop()]);
  });

  it('a Realtime session is a GenAI CLIENT span under the request span, its traceparent on the handshake, ended with the session and its usage', async () => {
    const client = clientTrace(1);
    const ws = new WebSocket(`${gw.url(80, '/rt/v1/realtime').replace(/^http/, 'ws')}?model=gpt-realtime`, ['realtime'], { headers: { traceparent: client.traceparent } });
    const events: { type: string }[] = [];
    const seen = (type: string) => new Promise<void>((resolve, reject) => {
      const check = () => {
        if (events.some((e) => e.type === type)) resolve();
        else setTimeout(check, 10);
      };
      ws.once('error', reject);
      check();
    });
    ws.on('message', (data) => events.push(JSON.parse(String(data)) as { type: string }));
    await new Promise<void>((resolve, reject) => ws.once('open', () => resolve()).once('error', reject));
    await seen('session.created');
    ws.send(JSON.stringify({ type: 'response.create' }));
    await seen('response.done');
    ws.send(JSON.stringify({ type: 'response.create' }));
    await new Promise<void>((resolve) => {
      const check = () => (events.filter((e) => e.type === 'response.done').length >= 2 ? resolve() : setTimeout(check, 10));
      check();
    });
    // The request span ends with the 101; the session's span only when the session does.
    const isSession = (s: ReceivedSpan) => s.kind === CLIENT && s.attributes['switchboard.llm.route'] === 'Realtime';
    await receiver.waitForSpans((all) => ofTrace(all, client.traceId).some((s) => s.kind === SERVER));
    assert.equal(ofTrace(receiver.spans, client.traceId).some(isSession), false, 'the session span is still open while the session is');
    ws.close();
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).some(isSession)), client.traceId);
    const server = spans.find((s) => s.kind === SERVER);
    const session = spans.find(isSession);
    assert.ok(server && session, JSON.stringify(spans.map((s) => [s.name, s.kind])));
    assert.equal(server.parentSpanId, client.spanId);
    assert.equal(server.attributes['http.response.status_code'], 101);
    assert.equal(session.parentSpanId, server.spanId);
    assert.equal(session.name, 'chat gpt-realtime');
    assert.equal(session.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(session.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(session.attributes['gen_ai.request.model'], 'gpt-realtime');
    assert.equal(session.attributes['server.address'], realtime.host);
    assert.equal(session.attributes['http.response.status_code'], 101);
    assert.equal(session.attributes['gen_ai.usage.input_tokens'], 2 * REALTIME_USAGE.input_tokens, 'the session\'s usage, summed over its responses');
    assert.equal(session.attributes['gen_ai.usage.output_tokens'], 2 * REALTIME_USAGE.output_tokens);
    assert.equal(session.attributes['gen_ai.usage.cache_read.input_tokens'], 2 * REALTIME_USAGE.input_token_details.cached_tokens);
    assert.equal(realtime.handshakes.at(-1)?.headers.traceparent, `00-${client.traceId}-${session.spanId}-01`, 'the provider handshake carries the session span\'s context');
  });

  it('an MCP session\'s GET stream: a CLIENT span per target server stream under the GET\'s request span, ended when the stream ends', async () => {
    const client = clientTrace(2);
    const { client: mcp } = await connect(gw.url(80, '/mcp'), { traceparent: client.traceparent });
    const result = await mcp.callTool({ name: 'echo', arguments: { message: 'streamed' } });
    assert.match(JSON.stringify(result.content), /streamed/);
    const isStream = (s: ReceivedSpan) => s.name === 'mcp_server_stream';
    // Give the GET stream time to open, then check its span is not exported while it is open.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(ofTrace(receiver.spans, client.traceId).some(isStream), false, 'the stream span is open while the stream is');
    await mcp.close();
    const spans = ofTrace(await receiver.waitForSpans((all) => ofTrace(all, client.traceId).some(isStream)), client.traceId);
    const stream = spans.find(isStream);
    assert.ok(stream);
    assert.equal(stream.kind, CLIENT);
    assert.equal(stream.attributes['switchboard.mcp.target'], 'everything');
    assert.equal(typeof stream.attributes['mcp.session.id'], 'string');
    assert.equal(typeof stream.attributes['switchboard.mcp.messages'], 'number');
    const get = spans.find((s) => s.spanId === stream.parentSpanId);
    assert.equal(get?.kind, SERVER);
    assert.equal(get?.attributes['http.request.method'], 'GET');
  });

  it('a legacy HTTP+SSE client session: each target stream is a CLIENT span under the initialize request, ended with the session', async () => {
    const isStream = (s: ReceivedSpan) => s.name === 'mcp_server_stream';
    const before = new Set(receiver.spans.filter(isStream).map((s) => s.spanId));
    const mcp = await connectSse(gw.url(80, '/mcp'));
    const result = await mcp.callTool({ name: 'echo', arguments: { message: 'legacy' } });
    assert.match(JSON.stringify(result.content), /legacy/);
    await mcp.close();
    const spans = await receiver.waitForSpans((all) => all.some((s) => isStream(s) && !before.has(s.spanId)));
    const stream = spans.find((s) => isStream(s) && !before.has(s.spanId));
    assert.ok(stream);
    assert.equal(stream.kind, CLIENT);
    assert.equal(stream.attributes['switchboard.mcp.target'], 'everything');
    const parent = spans.find((s) => s.spanId === stream.parentSpanId);
    assert.equal(parent?.kind, SERVER);
    assert.equal(parent?.attributes['http.request.method'], 'POST', 'the initialize that opened the target sessions');
  });
});
