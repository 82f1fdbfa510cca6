import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../../common/logger.ts';
import type { TrafficPolicy } from '../../../../ir/policy.ts';
import { ExtProcError, ExtProcImmediateResponse, type ExtProcConfig } from '../../../ext/extproc/index.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import { compileExtProc, planOf } from './ext-proc.ts';
import { immediateAnswer, replaceHeaders, requestFailure } from './outcomes.ts';

const deps = { logger: silentLogger, policy: { sources: {} } as TrafficPolicy };
const step = (member: unknown) => compileExtProc(member as never, deps);

/** A loopback port nothing listens on. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('extProc plan', () => {
  const cases: { name: string; options: ExtProcConfig['processingOptions']; want: ReturnType<typeof planOf> }[] = [
    { name: 'defaults stream both bodies', options: undefined, want: { requestBody: true, bufferRequestBody: false, response: true } },
    { name: 'Buffered request body is read first', options: { requestBodyMode: 'Buffered' }, want: { requestBody: true, bufferRequestBody: true, response: true } },
    {
      name: 'headers only: no response filter when response headers are skipped and bodies off',
      options: { requestBodyMode: 'None', responseBodyMode: 'None', responseHeaderMode: 'Skip' },
      want: { requestBody: false, bufferRequestBody: false, response: false },
    },
    {
      name: 'allowModeOverride keeps every phase reachable',
      options: { requestBodyMode: 'None', responseBodyMode: 'None', responseHeaderMode: 'Skip', allowModeOverride: true },
      want: { requestBody: true, bufferRequestBody: false, response: true },
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(planOf({ url: 'http://p', processingOptions: c.options }), c.want));
});

describe('extProc outcomes', () => {
  it('an immediate response keeps repeated headers and its body', () => {
    const answer = immediateAnswer({ status: 429, headers: [['x-a', '1'], ['x-a', '2'], ['x-b', '3']], body: new TextEncoder().encode('slow down') });
    assert.deepEqual({ ...answer, body: String(answer.body) }, { status: 429, headers: { 'x-a': ['1', '2'], 'x-b': '3' }, body: 'slow down' });
  });

  const failures: { name: string; err: unknown; status: number | undefined }[] = [
    { name: 'immediate response answers with its status', err: new ExtProcImmediateResponse({ status: 451, headers: [], body: new Uint8Array(0) }), status: 451 },
    { name: 'a body over the limit is 413', err: new ExtProcError('too big', 413), status: 413 },
    { name: 'a failed processor is 500', err: new ExtProcError('down'), status: 500 },
    { name: 'other errors are not ours', err: new Error('client went away'), status: undefined },
  ];
  for (const c of failures) {
    it(c.name, () => {
      const r = requestFailure(c.err);
      assert.equal(r?.action === 'respond' ? r.response.status : undefined, c.status);
    });
  }

  it('replaces headers in place without pseudo-headers', () => {
    const target: Record<string, string | string[]> = { a: '1', gone: 'x' };
    replaceHeaders(target, { ':path': '/x', a: '2', b: ['3', '4'] });
    assert.deepEqual(target, { a: '2', b: ['3', '4'] });
  });
});

describe('extProc step', () => {
  it('an invalid CEL attribute makes the member invalid at compile time', () => {
    assert.throws(() => step({ url: 'http://127.0.0.1:1', requestAttributes: { a: 'request.(' } }), /extProc\.requestAttributes/);
  });

  it('FailClosed answers 500 when the processor is unreachable, before any body is processed', async () => {
    const ctx = fakePolicyContext({ method: 'POST', body: 'x' });
    const r = await step({ url: await deadUrl() }).onRequest(ctx);
    assert.equal(r.action === 'respond' && r.response.status, 500);
    assert.equal(ctx.upstream.bodyStream, undefined);
    ctx.end();
  });

  it('FailOpen continues untouched while the body has not started', async () => {
    const ctx = fakePolicyContext({ method: 'POST', body: 'kept', headers: { 'x-a': '1' } });
    const r = await step({ url: await deadUrl(), failureMode: 'FailOpen', processingOptions: { requestBodyMode: 'Buffered' } }).onRequest(ctx);
    assert.equal(r.action, 'continue');
    assert.equal(String(ctx.sentBody), 'kept');
    assert.equal(ctx.upstreamHeaders['x-a'], '1');
    assert.deepEqual(ctx.identity.extproc, {});
    ctx.end();
  });

  it('conditional: no matching entry does nothing', async () => {
    const ctx = fakePolicyContext({ path: '/other' });
    const r = await step({ conditional: [{ condition: 'request.path == "/only"', policy: { url: 'http://127.0.0.1:1' } }] }).onRequest(ctx);
    assert.equal(r.action, 'continue');
    assert.equal(ctx.identity.extproc, undefined);
    assert.equal(ctx.responseFilters.length, 0);
  });
});
