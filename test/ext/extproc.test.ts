/** ext_proc sessions against a real connect-node ExternalProcessor that mutates headers and bodies. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { createActivation } from '../../src/cel/index.ts';
import { ExtProcClient, ExtProcError, type ExtProcConfig } from '../../src/proxy/ext/extproc/index.ts';
import { ProcessingResponseSchema, ExternalProcessor, type ProcessingRequest } from '../../src/proxy/ext/gen/envoy/service/ext_proc/v3/external_processor_pb.js';
import { StatusCode } from '../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { closedPort, startGrpcServer, type RunningServer } from './servers.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const p of parts) yield enc.encode(p);
}
async function collect(body: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const c of body) out += dec.decode(c);
  return out;
}
const activation = createActivation({ request: { method: 'POST', url: '/v1/x', headers: { 'x-user': 'alice' } } });

describe('ext_proc session', () => {
  let server: RunningServer;
  const seen: ProcessingRequest[] = [];
  before(async () => {
    server = await startGrpcServer((router) => router.service(ExternalProcessor, {
      async *process(requests) {
        for await (const req of requests) {
          seen.push(req);
          const r = req.request;
          if (r.case === 'requestHeaders') {
            const block = r.value.headers?.headers.some((h) => h.key === 'x-block');
            if (block) {
              yield create(ProcessingResponseSchema, { response: { case: 'immediateResponse', value: { status: { code: StatusCode.Forbidden }, body: enc.encode('teapot'), headers: { setHeaders: [{ header: { key: 'x-why', value: 'blocked' } }] } } } });
              continue;
            }
            const skipBody = r.value.headers?.headers.some((h) => h.key === 'x-skip-body');
            yield create(ProcessingResponseSchema, {
              response: { case: 'requestHeaders', value: { response: { headerMutation: { setHeaders: [{ header: { key: 'x-processed', value: 'yes' } }], removeHeaders: ['x-secret'] } } } },
              dynamicMetadata: { verdict: 'clean' },
              ...(skipBody ? { modeOverride: { requestBodyMode: 0 } } : {}),
            });
          } else if (r.case === 'requestBody' || r.case === 'responseBody') {
            const text = dec.decode(r.value.body);
            yield create(ProcessingResponseSchema, { response: { case: r.case, value: { response: { bodyMutation: { mutation: { case: 'body', value: enc.encode(text.toUpperCase()) } } } } } });
          } else if (r.case === 'responseHeaders') {
            yield create(ProcessingResponseSchema, { response: { case: 'responseHeaders', value: { response: { headerMutation: { setHeaders: [{ header: { key: 'x-resp', value: 'seen' } }] } } } } });
          }
        }
      },
    }));
  });
  after(() => server.close());

  const run = async (config: Omit<ExtProcConfig, 'url'>, body: string[], headers: Record<string, string> = {}, bufferLimit?: number) => {
    const client = new ExtProcClient({ url: server.url, ...config }, { bufferLimit });
    const s = client.session(activation);
    try {
      const h = await s.requestHeaders({ 'x-secret': 's', 'content-type': 'text/plain', ...headers }, false);
      if (h.kind === 'respond') return { h };
      const up = await collect(s.requestBody(chunks(...body)));
      const rh = await s.responseHeaders(200, { 'content-type': 'text/plain' }, false);
      const down = await collect(s.responseBody(chunks('ok ', 'done')));
      return { h, up, rh, down, metadata: s.extproc };
    } finally {
      s.close();
      client.close();
    }
  };

  it('mutates headers and buffered bodies in both directions, and keeps dynamic metadata', async () => {
    const r = await run({ processingOptions: { requestBodyMode: 'Buffered', responseBodyMode: 'Buffered' } }, ['hel', 'lo']);
    assert.equal(r.h.kind, 'continue');
    assert.deepEqual(r.h.kind === 'continue' && r.h.headers, { 'content-type': 'text/plain', 'x-processed': 'yes' });
    assert.equal(r.up, 'HELLO');
    assert.deepEqual(r.rh?.kind === 'continue' && r.rh.headers, { 'content-type': 'text/plain', 'x-resp': 'seen' });
    assert.equal(r.down, 'OK DONE');
    assert.deepEqual(r.metadata, { verdict: 'clean' });
  });

  it('streams chunk by chunk in FullDuplexStreamed (the default)', async () => {
    seen.length = 0;
    const r = await run({}, ['ab', 'cd']);
    assert.equal(r.up, 'ABCD');
    const bodies = seen.filter((m) => m.request.case === 'requestBody').map((m) => m.request.case === 'requestBody' && [dec.decode(m.request.value.body), m.request.value.endOfStream]);
    assert.deepEqual(bodies, [['ab', false], ['cd', false], ['', true]]);
  });

  it('BufferedPartial sends the buffered prefix and passes the rest through', async () => {
    const r = await run({ processingOptions: { requestBodyMode: 'BufferedPartial', responseBodyMode: 'None' } }, ['abc', 'def', 'ghi'], {}, 4);
    assert.equal(r.up, 'ABCDefghi');
    assert.equal(r.down, 'ok done');
  });

  it('Buffered fails with 413 when the request body is over the buffer limit', async () => {
    await assert.rejects(run({ processingOptions: { requestBodyMode: 'Buffered' } }, ['abc', 'def'], {}, 4), (e: unknown) => e instanceof ExtProcError && e.status === 413);
  });

  it('answers with the immediate response', async () => {
    const r = await run({}, [], { 'x-block': '1' });
    assert.deepEqual(r.h.kind === 'respond' && { ...r.h.response, body: dec.decode(r.h.response.body) }, { status: 403, headers: [['x-why', 'blocked']], body: 'teapot' });
  });

  it('honours mode_override only when allowModeOverride is set', async () => {
    assert.equal((await run({ processingOptions: { allowModeOverride: true } }, ['abc'], { 'x-skip-body': '1' })).up, 'abc');
    assert.equal((await run({}, ['abc'], { 'x-skip-body': '1' })).up, 'ABC');
  });

  it('FailOpen passes through when the processor is down; FailClosed fails', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const open = new ExtProcClient({ url, failureMode: 'FailOpen' });
    const closed = new ExtProcClient({ url });
    try {
      const s = open.session(activation);
      const h = await s.requestHeaders({ a: '1' }, false);
      assert.deepEqual(h, { kind: 'continue', headers: { a: '1' } });
      assert.equal(await collect(s.requestBody(chunks('x'))), 'x');
      s.close();
      const c = closed.session(activation);
      await assert.rejects(c.requestHeaders({ a: '1' }, false), ExtProcError);
      c.close();
    } finally {
      open.close();
      closed.close();
    }
  });
});
