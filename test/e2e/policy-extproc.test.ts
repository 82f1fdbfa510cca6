/**
 * traffic.extProc through YAML against a real ExternalProcessor (connect-node over h2c): header
 * mutations both ways, Buffered and streamed bodies, immediate responses before and during the
 * body, FailOpen/FailClosed with the processor down, 413 over the buffer limit, the `extproc` CEL
 * variable, the conditional form and the session's end; trailers both ways (HttpTrailers messages,
 * response trailer mutations) and request/response attributes, over raw HTTP/1.1 chunked messages.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import type { HeaderMap } from '../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { ExternalProcessor, ProcessingResponseSchema, type ProcessingRequest, type ProcessingResponse } from '../../src/proxy/ext/gen/envoy/service/ext_proc/v3/external_processor_pb.js';
import { headerValueText } from '../../src/proxy/ext/headers.ts';
import { closedPort, startGrpcServer, startHttpServer, type RunningServer } from '../ext/servers.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

const route = (name: string, prefix: string) => prefixRoute(name, prefix, 'up');
const policy = (name: string, traffic: string) => routeTrafficPolicy(name, name, traffic);
/** The whole Gateway buffers at most 1 KiB, so the 413 case needs no large body. */
const smallBuffers = `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: frontend, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    http: { maxBufferSize: 1Ki }
`;

function headersOf(map: HeaderMap | undefined): Record<string, string> {
  return Object.fromEntries((map?.headers ?? []).map((h) => [h.key, headerValueText(h)]));
}

const respond = (init: Parameters<typeof create<typeof ProcessingResponseSchema>>[1]): ProcessingResponse => create(ProcessingResponseSchema, init);
const upperCased = (c: 'requestBody' | 'responseBody', body: Uint8Array) =>
  respond({ response: { case: c, value: { response: { bodyMutation: { mutation: { case: 'body', value: enc.encode(dec.decode(body).toUpperCase()) } } } } } });
const immediate = (code: number, body: string) =>
  respond({ response: { case: 'immediateResponse', value: { status: { code }, body: enc.encode(body), headers: { setHeaders: [{ header: { key: 'x-why', value: 'processor' } }] } } } });

/**
 * A processor whose behaviour follows the request path it sees first: `/block` answers at the
 * headers, `/block-body` answers when the body says "forbidden", `/buffered` and `/streamed`
 * upper-case both bodies; every request gets `x-processed` (and loses `x-secret`), every
 * response `x-resp` (and loses `x-upstream-secret`), and the metadata `{ verdict: clean }`.
 */
function processor(seen: ProcessingRequest[], streams: { opened: number; closed: number }) {
  return {
    async *process(requests: AsyncIterable<ProcessingRequest>): AsyncIterable<ProcessingResponse> {
      streams.opened++;
      let path = '';
      try {
        for await (const req of requests) {
          seen.push(req);
          const r = req.request;
          if (r.case === 'requestHeaders') {
            path = headersOf(r.value.headers)[':path'] ?? '';
            if (path.startsWith('/block/')) {
              yield immediate(403, 'blocked by the processor');
              continue;
            }
            yield respond({
              response: { case: 'requestHeaders', value: { response: { headerMutation: { setHeaders: [{ header: { key: 'x-processed', value: 'yes' } }], removeHeaders: ['x-secret'] } } } },
              dynamicMetadata: { verdict: 'clean' },
            });
          } else if (r.case === 'requestBody') {
            if (path.startsWith('/block-body') && dec.decode(r.value.body).includes('forbidden')) yield immediate(451, 'not this body');
            else yield upperCased('requestBody', r.value.body);
          } else if (r.case === 'responseHeaders') {
            yield respond({ response: { case: 'responseHeaders', value: { response: { headerMutation: { setHeaders: [{ header: { key: 'x-resp', value: 'seen' } }], removeHeaders: ['x-upstream-secret'] } } } } });
          } else if (r.case === 'responseBody') {
            yield upperCased('responseBody', r.value.body);
          } else if (r.case === 'requestTrailers') {
            yield respond({ response: { case: 'requestTrailers', value: {} } });
          } else if (r.case === 'responseTrailers') {
            const set = [{ header: { key: 'x-trailer-processed', value: 'yes' } }];
            yield respond({ response: { case: 'responseTrailers', value: { headerMutation: { setHeaders: set, removeHeaders: ['x-drop'] } } } });
          }
        }
      } finally {
        streams.closed++;
      }
    },
  };
}

interface Seen {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

describe('extProc end to end', () => {
  let upstream: RunningServer;
  let proc: RunningServer;
  let gw: GatewayHarness;
  const seen: ProcessingRequest[] = [];
  const upstreamSeen: Seen[] = [];
  const streams = { opened: 0, closed: 0 };

  before(async () => {
    upstream = await startHttpServer((req, body, res) => {
      if (req.url?.startsWith('/trailers') || req.url?.startsWith('/no-trailers')) {
        // Chunked with trailers; the request's own trailers never arrive (the gateway does not forward them).
        res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum, x-drop' });
        res.write(`got ${body.toString()}; trailers ${JSON.stringify(req.trailers)}`);
        res.addTrailers({ 'x-checksum': 'abc', 'x-drop': 'gone' });
        res.end();
        return;
      }
      const record: Seen = { path: req.url ?? '', headers: req.headers as Record<string, string>, body: body.toString() };
      upstreamSeen.push(record);
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream-secret': 'hidden' }).end(JSON.stringify(record));
    });
    proc = await startGrpcServer((router) => router.service(ExternalProcessor, processor(seen, streams)));
    const dead = `http://127.0.0.1:${await closedPort()}`;
    gw = await startGateway(
      gatewayClass() + service('up', { host: '127.0.0.1', port: upstream.port }) + gateway('gw', [{ name: 'http', port: 80 }]) + smallBuffers +
      route('headers', '/headers') + policy('headers', `extProc:
  url: ${proc.url}
  processingOptions: { requestBodyMode: None, responseBodyMode: None }
transformation:
  response:
    set: [{ name: x-verdict, value: extproc.verdict }]`) +
      route('buffered', '/buffered') + policy('buffered', `extProc:
  url: ${proc.url}
  processingOptions: { requestBodyMode: Buffered, responseBodyMode: Buffered }`) +
      route('streamed', '/streamed') + policy('streamed', `extProc: { url: "${proc.url}" }`) +
      route('block', '/block/') + policy('block', `extProc: { url: "${proc.url}" }`) +
      route('block-body', '/block-body') + policy('block-body', `extProc: { url: "${proc.url}", processingOptions: { responseBodyMode: None } }`) +
      route('trailers', '/trailers') + policy('trailers', `extProc:
  url: ${proc.url}
  requestAttributes: { path: request.path }
  responseAttributes: { status: response.code, type: 'response.headers["content-type"]', path: request.path }`) +
      route('no-trailers', '/no-trailers') + policy('no-trailers', `extProc:
  url: ${proc.url}
  processingOptions: { requestTrailerMode: Skip, responseTrailerMode: Skip }`) +
      route('closed', '/closed') + policy('closed', `extProc: { url: "${dead}" }`) +
      route('open', '/open') + policy('open', `extProc: { url: "${dead}", failureMode: FailOpen }`) +
      route('conditional', '/conditional') + policy('conditional', `extProc:
  conditional:
    - condition: request.path.startsWith("/conditional/open")
      policy: { url: "${dead}", failureMode: FailOpen }
    - policy: { url: "${proc.url}", processingOptions: { requestBodyMode: None, responseBodyMode: None } }`),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await proc?.close();
    await upstream?.close();
  });

  it('mutates request headers upstream and response headers downstream; extproc metadata reaches CEL', async () => {
    const res = await gw.request(80, { path: '/headers', method: 'POST', body: 'as is', headers: { 'x-secret': 's', 'x-keep': 'k' } });
    assert.equal(res.status, 200);
    const up = JSON.parse(res.text) as Seen;
    assert.equal(up.headers['x-processed'], 'yes');
    assert.equal(up.headers['x-secret'], undefined);
    assert.equal(up.headers['x-keep'], 'k');
    assert.equal(up.body, 'as is', 'requestBodyMode None leaves the body alone');
    assert.equal(res.headers['x-resp'], 'seen');
    assert.equal(res.headers['x-upstream-secret'], undefined);
    assert.equal(res.headers['x-verdict'], 'clean');
    const headers = seen.findLast((m) => m.request.case === 'requestHeaders');
    const sent = headers?.request.case === 'requestHeaders' ? headersOf(headers.request.value.headers) : {};
    assert.equal(sent[':method'], 'POST');
    assert.equal(sent[':path'], '/headers');
    assert.equal(sent['x-secret'], 's');
  });

  it('Buffered rewrites the whole request body (with its new length) and the response body', async () => {
    const res = await gw.request(80, { path: '/buffered', method: 'POST', body: 'hello world' });
    assert.equal(res.status, 200);
    const up = upstreamSeen.at(-1)!;
    assert.equal(up.body, 'HELLO WORLD');
    assert.equal(up.headers['content-length'], '11');
    const answer = JSON.parse(res.text) as Record<string, unknown>;
    assert.equal(answer.BODY, 'HELLO WORLD', 'the response body went through the processor too');
    const bodies = seen.filter((m) => m.request.case === 'requestBody').at(-1);
    assert.deepEqual(bodies?.request.case === 'requestBody' && [dec.decode(bodies.request.value.body), bodies.request.value.endOfStream], ['hello world', true]);
  });

  it('FullDuplexStreamed (the default) streams the request body chunk by chunk, chunked upstream', async () => {
    const before = seen.length;
    const res = await gw.request(80, { path: '/streamed', method: 'POST', body: 'stream me' });
    assert.equal(res.status, 200);
    const up = upstreamSeen.at(-1)!;
    assert.equal(up.body, 'STREAM ME');
    assert.equal(up.headers['content-length'], undefined);
    assert.equal(up.headers['transfer-encoding'], 'chunked');
    assert.equal((JSON.parse(res.text) as Record<string, unknown>).BODY, 'STREAM ME');
    const requestBodies = seen.slice(before).flatMap((m) => (m.request.case === 'requestBody' ? [m.request.value] : []));
    assert.equal(requestBodies.map((b) => dec.decode(b.body)).join(''), 'stream me');
    assert.deepEqual(requestBodies.map((b) => b.endOfStream).slice(-1), [true], 'the stream ends with an end-of-stream message');
    assert.ok(requestBodies.slice(0, -1).every((b) => !b.endOfStream));
  });

  it('an immediate response at the headers answers without reaching the upstream', async () => {
    const count = upstreamSeen.length;
    const res = await gw.request(80, { path: '/block/x' });
    assert.equal(res.status, 403);
    assert.equal(res.text, 'blocked by the processor');
    assert.equal(res.headers['x-why'], 'processor');
    assert.equal(upstreamSeen.length, count);
  });

  it('an immediate response during the streamed body is what the client gets', async () => {
    const res = await gw.request(80, { path: '/block-body', method: 'POST', body: 'something forbidden' });
    assert.equal(res.status, 451);
    assert.equal(res.text, 'not this body');
    assert.equal(res.headers['x-why'], 'processor');
  });

  it('FailClosed answers 500 when the processor is down; FailOpen forwards untouched', async () => {
    const closed = await gw.request(80, { path: '/closed', method: 'POST', body: 'x' });
    assert.equal(closed.status, 500);
    assert.equal((JSON.parse(closed.text) as { error: { code: string } }).error.code, 'ext_proc_failed');
    const open = await gw.request(80, { path: '/open', method: 'POST', body: 'kept', headers: { 'x-secret': 's' } });
    assert.equal(open.status, 200);
    const up = JSON.parse(open.text) as Seen;
    assert.equal(up.body, 'kept');
    assert.equal(up.headers['x-secret'], 's');
    assert.equal(up.headers['x-processed'], undefined);
  });

  it('Buffered answers 413 for a body over the frontend buffer limit', async () => {
    const count = upstreamSeen.length;
    const res = await gw.request(80, { path: '/buffered', method: 'POST', body: 'x'.repeat(2048) });
    assert.equal(res.status, 413);
    assert.equal(upstreamSeen.length, count);
  });

  it('the conditional form runs the first matching entry', async () => {
    const open = await gw.request(80, { path: '/conditional/open' });
    assert.equal(open.status, 200);
    assert.equal((JSON.parse(open.text) as Seen).headers['x-processed'], undefined);
    const fallback = await gw.request(80, { path: '/conditional/other' });
    assert.equal((JSON.parse(fallback.text) as Seen).headers['x-processed'], 'yes');
  });

  it('trailers: HttpTrailers both ways after a body without end_of_stream; response trailer mutations reach the client', async () => {
    const before = seen.length;
    const res = await chunkedWithTrailers(gw.portOf(80), '/trailers', 'abc', { 'x-client-sum': '42' });
    assert.equal(res.status, 200);
    assert.equal(res.body, 'GOT ABC; TRAILERS {}', 'bodies streamed through the processor; no request trailers upstream');
    assert.deepEqual(res.trailers, { 'x-checksum': 'abc', 'x-trailer-processed': 'yes' }, 'set and remove applied to the response trailers');

    const mine = seen.slice(before);
    const requestTrailers = mine.find((m) => m.request.case === 'requestTrailers');
    assert.deepEqual(requestTrailers?.request.case === 'requestTrailers' && headersOf(requestTrailers.request.value.trailers), { 'x-client-sum': '42' });
    const responseTrailers = mine.find((m) => m.request.case === 'responseTrailers');
    assert.deepEqual(responseTrailers?.request.case === 'responseTrailers' && headersOf(responseTrailers.request.value.trailers), { 'x-checksum': 'abc', 'x-drop': 'gone' });
    const bodies = mine.flatMap((m) => (m.request.case === 'requestBody' || m.request.case === 'responseBody' ? [m.request.value] : []));
    assert.ok(bodies.length >= 2 && bodies.every((b) => !b.endOfStream), 'with trailers to follow no body message ends the stream');
    const order = mine.map((m) => m.request.case);
    assert.ok(order.indexOf('requestTrailers') > order.lastIndexOf('requestBody') && order.indexOf('requestTrailers') < order.indexOf('responseHeaders'));
    assert.equal(order.at(-1), 'responseTrailers');
  });

  it('attributes: request attributes with the request headers, response attributes see the response', async () => {
    const before = seen.length;
    await chunkedWithTrailers(gw.portOf(80), '/trailers/attrs', 'x', {});
    const mine = seen.slice(before);
    const attrs = (c: string) => mine.find((m) => m.request.case === c)?.attributes['envoy.filters.http.ext_proc'];
    assert.deepEqual(attrs('requestHeaders'), { path: '/trailers/attrs' });
    assert.deepEqual(attrs('responseHeaders'), { status: 200, type: 'text/plain', path: '/trailers/attrs' });
    assert.ok(mine.filter((m) => Object.keys(m.attributes).length > 0).length === 2, 'only the first message of each phase carries attributes');
    assert.equal(mine.some((m) => m.request.case === 'requestTrailers'), false, 'a request without trailers sends no trailer message');
  });

  it('trailer modes Skip: no trailer messages, the upstream trailers pass unchanged', async () => {
    const before = seen.length;
    const res = await chunkedWithTrailers(gw.portOf(80), '/no-trailers', 'abc', { 'x-client-sum': '42' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.trailers, { 'x-checksum': 'abc', 'x-drop': 'gone' });
    const mine = seen.slice(before);
    assert.equal(mine.some((m) => m.request.case === 'requestTrailers' || m.request.case === 'responseTrailers'), false);
    assert.equal(mine.filter((m) => (m.request.case === 'requestBody' || m.request.case === 'responseBody') && m.request.value.endOfStream).length, 2);
  });

  it('closes every processor stream once its request is over', async () => {
    await gw.request(80, { path: '/streamed', method: 'POST', body: 'one more' });
    // The gateway cancels the stream after the response; the server notices on its next read.
    for (let i = 0; i < 200 && streams.closed < streams.opened; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(streams.opened > 0);
    assert.equal(streams.closed, streams.opened);
  });
});

/**
 * An HTTP/1.1 POST with a chunked body and (when given) request trailers; the response's body and
 * trailers as the client received them. Trailers with no entries send none.
 */
function chunkedWithTrailers(port: number, path: string, body: string, trailers: Record<string, string>): Promise<{ status: number; body: string; trailers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'transfer-encoding': 'chunked', ...(Object.keys(trailers).length > 0 ? { trailer: Object.keys(trailers).join(', ') } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.write(body);
    if (Object.keys(trailers).length > 0) req.addTrailers(trailers);
    req.end();
  });
}
