import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import type { TracingPolicy } from '../../../ir/members.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { compileTracing, type CompiledTracing } from './compile.ts';
import { exportUrl } from './provider.ts';
import { currentTrace, runTraced, startRequestTrace, traceCall } from './request-trace.ts';
import { httpAttempts } from './upstream.ts';

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const NAMES = { gateway: 'ns/gw', listener: 'http', route: 'ns/chat', backend: 'ns/llm' };

function setup(policy: Partial<TracingPolicy>): { tracing: CompiledTracing; exporter: InMemorySpanExporter; errors: string[] } {
  const exporter = new InMemorySpanExporter();
  const errors: string[] = [];
  const tracing = compileTracing({ url: 'http://127.0.0.1:4318', ...policy }, { endpoint: () => 'http://127.0.0.1:4318', exporter }, (m) => errors.push(m));
  assert.ok(tracing);
  return { tracing, exporter, errors };
}

function request(headers: Record<string, string> = {}): DownstreamRequest {
  return {
    method: 'POST', url: '/v1/chat/completions?x=1', httpVersion: '1.1',
    headers: { host: 'gw.example', 'user-agent': 'test', ...headers },
    socket: { remoteAddress: '10.0.0.9', remotePort: 5555 },
  } as unknown as DownstreamRequest;
}

async function spans(tracing: CompiledTracing, exporter: InMemorySpanExporter): Promise<ReadableSpan[]> {
  await tracing.provider.forceFlush();
  return exporter.getFinishedSpans();
}

const samplingRows: readonly { name: string; policy: Partial<TracingPolicy>; headers?: Record<string, string>; traced: boolean }[] = [
  { name: 'no trace from the client, randomSampling unset: not traced', policy: {}, traced: false },
  { name: 'randomSampling true starts a trace', policy: { randomSampling: 'true' }, traced: true },
  { name: 'randomSampling 0.0 never does', policy: { randomSampling: '0.0' }, traced: false },
  { name: 'randomSampling from CEL: header present', policy: { randomSampling: 'request.headers["x-trace"] == "yes"' }, headers: { 'x-trace': 'yes' }, traced: true },
  { name: 'randomSampling from CEL: header absent', policy: { randomSampling: 'request.headers["x-trace"] == "yes"' }, traced: false },
  { name: 'a failing sampling expression does not trace', policy: { randomSampling: 'request.headers["x-ratio"] + 1' }, traced: false },
  { name: 'client-sampled trace, clientSampling unset: traced', policy: {}, headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` }, traced: true },
  { name: 'client trace not sampled (flags 00): followed', policy: { randomSampling: 'true' }, headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-00` }, traced: false },
  { name: 'clientSampling false turns client traces off', policy: { clientSampling: 'false' }, headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` }, traced: false },
  { name: 'an invalid traceparent counts as none', policy: { randomSampling: 'true' }, headers: { traceparent: 'garbage' }, traced: true },
];

for (const row of samplingRows) {
  test(`sampling: ${row.name}`, async () => {
    const { tracing, exporter } = setup(row.policy);
    const t = startRequestTrace(tracing, request(row.headers), 'http');
    assert.equal(t !== undefined, row.traced);
    t?.end(200, NAMES);
    assert.equal((await spans(tracing, exporter)).length, row.traced ? 1 : 0);
    await tracing.provider.shutdown();
  });
}

test('the request span continues the client trace and names the request', async () => {
  const { tracing, exporter } = setup({});
  const t = startRequestTrace(tracing, request({ traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc' }), 'https');
  assert.ok(t);
  t.end(503, NAMES);
  const [span] = await spans(tracing, exporter);
  assert.equal(span.spanContext().traceId, CLIENT_TRACE);
  assert.equal(span.parentSpanContext?.spanId, CLIENT_SPAN);
  assert.equal(span.kind, SpanKind.SERVER);
  assert.equal(span.name, 'POST ns/chat');
  assert.equal(span.attributes['url.path'], '/v1/chat/completions');
  assert.equal(span.attributes['url.scheme'], 'https');
  assert.equal(span.attributes['http.response.status_code'], 503);
  assert.equal(span.attributes['switchboard.backend'], 'ns/llm');
  assert.equal(span.status.code, SpanStatusCode.ERROR);
  await tracing.provider.shutdown();
});

test('CEL attributes: a failing expression drops only its own attribute', async () => {
  const { tracing, exporter } = setup({
    randomSampling: 'true',
    attributes: [
      { name: 'user', expression: 'request.headers["x-user"]' },
      { name: 'missing', expression: 'request.headers["x-absent"]' },
      { name: 'status', expression: 'response.code' },
    ],
  });
  const t = startRequestTrace(tracing, request({ 'x-user': 'alice' }), 'http');
  t?.end(201, NAMES);
  const [span] = await spans(tracing, exporter);
  assert.equal(span.attributes.user, 'alice');
  assert.equal('missing' in span.attributes, false);
  assert.equal(span.attributes.status, 201);
  await tracing.provider.shutdown();
});

test('CEL attributes see what the policies established when a policy context is given', async () => {
  const { tracing, exporter } = setup({ randomSampling: 'true', attributes: [{ name: 'user', expression: 'jwt.sub' }, { name: 'key', expression: 'apiKey.name' }] });
  const t = startRequestTrace(tracing, request(), 'http');
  assert.ok(t);
  t.useCel(() => ({ request: { method: 'POST', url: '/', headers: {} }, jwt: { sub: 'alice' }, apiKey: { name: 'team-a' } }));
  t.end(200, NAMES);
  const [span] = await spans(tracing, exporter);
  assert.equal(span.attributes.user, 'alice');
  assert.equal(span.attributes.key, 'team-a');
  await tracing.provider.shutdown();
});

test('resources: CEL literals become resource attributes; service.name defaults to switchboard', async () => {
  const { tracing, exporter } = setup({ randomSampling: 'true', resources: [{ name: 'deployment.environment.name', expression: '"prod"' }, { name: 'broken', expression: 'request.host' }] });
  startRequestTrace(tracing, request(), 'http')?.end(200, NAMES);
  const [span] = await spans(tracing, exporter);
  assert.equal(span.resource.attributes['deployment.environment.name'], 'prod');
  assert.equal(span.resource.attributes['service.name'], 'switchboard');
  assert.equal('broken' in span.resource.attributes, false);
  await tracing.provider.shutdown();
});

test('policy calls and upstream attempts are CLIENT children carrying their own traceparent', async () => {
  const { tracing, exporter } = setup({});
  const t = startRequestTrace(tracing, request({ traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc' }), 'http');
  assert.ok(t);
  const sent: Record<string, string>[] = [];
  await runTraced(t, async () => {
    assert.equal(currentTrace(), t);
    await traceCall('extAuth', { 'rpc.system.name': 'grpc' }, async (headers) => {
      assert.ok(headers);
      sent.push(headers);
    });
    await assert.rejects(traceCall('rateLimit', {}, () => Promise.reject(new Error('unavailable'))));
    const attempts = httpAttempts('POST', 'ns/svc', 'svc:8080');
    assert.ok(attempts);
    for (const status of [503, 200]) {
      const headers: Record<string, unknown> = { Traceparent: 'client-value' };
      attempts.begin(headers);
      sent.push(headers as Record<string, string>);
      attempts.end({ status });
    }
  });
  t.end(200, NAMES);
  const all = await spans(tracing, exporter);
  const server = all.find((s) => s.kind === SpanKind.SERVER);
  assert.ok(server);
  const children = all.filter((s) => s !== server);
  assert.deepEqual(children.map((s) => s.name), ['extAuth', 'rateLimit', 'POST', 'POST']);
  for (const c of children) {
    assert.equal(c.kind, SpanKind.CLIENT);
    assert.equal(c.parentSpanContext?.spanId, server.spanContext().spanId);
    assert.equal(c.spanContext().traceId, CLIENT_TRACE);
  }
  assert.equal(children[1].status.code, SpanStatusCode.ERROR);
  assert.equal(children[2].status.code, SpanStatusCode.ERROR, 'a 503 attempt failed');
  assert.equal(children[3].attributes['http.request.resend_count'], 1);
  // Each call's headers name that call's span; the client's own spelling is replaced, its tracestate kept.
  for (const [i, headers] of sent.entries()) {
    const span = [children[0], children[2], children[3]][i];
    assert.equal(headers.traceparent, `00-${CLIENT_TRACE}-${span.spanContext().spanId}-01`);
    assert.equal(headers.tracestate, 'vendor=abc');
    assert.equal('Traceparent' in headers, false);
  }
  await tracing.provider.shutdown();
});

test('outside a traced request nothing is made', async () => {
  assert.equal(currentTrace(), undefined);
  assert.equal(httpAttempts('GET', 'b', 'a'), undefined);
  let got: unknown = 'unset';
  await traceCall('extAuth', {}, async (headers) => {
    got = headers;
  });
  assert.equal(got, undefined);
});

test('a traced request holds its config until its span ends', async () => {
  let active = 0;
  const closers: (() => void)[] = [];
  const exporter = new InMemorySpanExporter();
  const tracing = compileTracing({ url: 'http://x', randomSampling: 'true' }, {
    endpoint: () => 'http://x', exporter,
    lifecycle: { enter: () => active++, leave: () => active--, onRetire: (c) => closers.push(c) },
  }, () => undefined);
  assert.ok(tracing);
  const t = startRequestTrace(tracing, request(), 'http');
  assert.equal(active, 1);
  t?.end(200, NAMES);
  t?.end(200, NAMES);
  assert.equal(active, 0);
  assert.equal(closers.length, 1, 'the provider is shut down when the config retires');
  closers[0]();
});

test('an endpoint that cannot be resolved leaves the bind untraced, reported', () => {
  const errors: string[] = [];
  const tracing = compileTracing({ backendKey: 'backend/ns/otel' }, { endpoint: () => { throw new Error('backend backend/ns/otel has no ready endpoint'); } }, (m) => errors.push(m));
  assert.equal(tracing, undefined);
  assert.match(errors[0], /no ready endpoint/);
});

const urlRows = [
  { name: 'HTTP appends /v1/traces', url: 'http://collector:4318', protocol: 'HTTP', want: 'http://collector:4318/v1/traces' },
  { name: 'HTTP keeps a URL that names the path', url: 'https://collector/otlp/v1/traces', protocol: 'HTTP', want: 'https://collector/otlp/v1/traces' },
  { name: 'HTTP under a prefix', url: 'http://collector:4318/otlp/', protocol: 'HTTP', want: 'http://collector:4318/otlp/v1/traces' },
  { name: 'gRPC uses the origin', url: 'http://collector:4317/ignored', protocol: 'GRPC', want: 'http://collector:4317' },
] as const;
for (const row of urlRows) test(`export URL: ${row.name}`, () => assert.equal(exportUrl(row.url, row.protocol), row.want));
