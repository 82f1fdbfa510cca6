import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TrafficPolicy } from '../../../../ir/policy.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import type { PolicyResult } from '../../result.ts';
import { compileTransformation } from './transformation.ts';

const deps = { logger: undefined as never, policy: { sources: {} } as TrafficPolicy };
const step = (member: unknown) => compileTransformation(member as never, deps);

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}
async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  for await (const c of body) out += Buffer.from(c).toString();
  return out;
}

describe('transformation', () => {
  it('sets, adds and removes request headers from CEL, all reading the original request', async () => {
    const ctx = fakePolicyContext({ path: '/v1/x', headers: { 'x-user': 'ann', 'x-drop': '1', 'x-list': 'a' } });
    await step({ request: {
      set: [{ name: 'x-path', value: 'request.path' }, { name: 'x-user', value: '"user-" + request.headers["x-user"]' }, { name: 'x-bad', value: 'request.headers["missing"]' }],
      add: [{ name: 'x-list', value: '"b"' }],
      remove: ['x-drop'],
    } }).onRequest(ctx);
    assert.equal(ctx.upstreamHeaders['x-path'], '/v1/x');
    assert.equal(ctx.upstreamHeaders['x-user'], 'user-ann');
    assert.deepEqual(ctx.upstreamHeaders['x-list'], ['a', 'b']);
    assert.equal(ctx.upstreamHeaders['x-drop'], undefined);
    assert.equal(ctx.upstreamHeaders['x-bad'], undefined, 'a failing value leaves the header alone');
  });

  it('replaces the request body from CEL that reads it', async () => {
    const ctx = fakePolicyContext({ method: 'POST', body: '{"model":"a"}' });
    const r = await step({ request: { body: 'toJson({"wrapped": json(string(request.body))})' } }).onRequest(ctx);
    assert.equal(r.action, 'continue');
    assert.deepEqual(JSON.parse(String(ctx.sentBody)), { wrapped: { model: 'a' } });
  });

  it('answers 500 when the request body expression fails', async () => {
    const ctx = fakePolicyContext({ method: 'POST', body: 'x' });
    const r = await step({ request: { body: 'request.headers["nope"]' } }).onRequest(ctx);
    assert.equal(r.action === 'respond' && r.response.status, 500);
  });

  it('transforms response headers with response.code and response.headers', () => {
    const ctx = fakePolicyContext();
    step({ response: { set: [{ name: 'x-code', value: 'string(response.code)' }, { name: 'x-echo', value: 'response.headers["x-up"]' }], remove: ['server'] } }).onRequest(ctx);
    assert.deepEqual(ctx.respondWith(201, { 'x-up': 'u', server: 's' }), { 'x-up': 'u', 'x-code': '201', 'x-echo': 'u' });
    assert.equal(ctx.responseFilters.length, 0, 'no body expression: the response streams untouched');
  });

  it('rewrites the response body through a response filter', async () => {
    const ctx = fakePolicyContext();
    step({ response: { body: '"[" + string(response.body) + "]:" + string(response.code)' } }).onRequest(ctx);
    assert.equal(ctx.responseFilters.length, 1);
    const out = ctx.responseFilters[0].body!(chunks('he', 'llo'), { status: 200, headers: {} });
    assert.equal(await text(out), '[hello]:200');
  });

  it('runs the first conditional branch whose condition holds', async () => {
    const member = { conditional: [
      { condition: 'request.headers["x-mode"] == "a"', policy: { request: { set: [{ name: 'x-branch', value: '"a"' }] } } },
      { policy: { request: { set: [{ name: 'x-branch', value: '"fallback"' }] } } },
    ] };
    for (const [mode, branch] of [['a', 'a'], ['b', 'fallback']]) {
      const ctx = fakePolicyContext({ headers: { 'x-mode': mode } });
      assert.equal((step(member).onRequest(ctx) as PolicyResult).action, 'continue');
      assert.equal(ctx.upstreamHeaders['x-branch'], branch);
    }
  });

  const invalid = [
    { name: 'bad CEL in a header value', member: { request: { set: [{ name: 'x', value: '1 +' }] } }, error: /request\.set\[0\]\.value/ },
    { name: 'a pseudo-header other than :authority', member: { request: { set: [{ name: ':path', value: '"/x"' }] } }, error: /:path/ },
    { name: 'a non-bool condition', member: { conditional: [{ condition: '"yes"', policy: { request: { remove: ['x'] } } }] }, error: /condition/ },
  ];
  for (const c of invalid) it(`rejects ${c.name}`, () => assert.throws(() => step(c.member), c.error));
});
