import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { compileBackend } from '../../backends/backend.ts';
import { compileBackendPolicy } from '../../policies/backend/compile.ts';
import { UpstreamPools } from '../../policies/backend/pools.ts';
import { ownMembers } from '../../policies/backend/sub-backend.ts';
import { backend } from '../../testing/config.ts';
import { fakePolicyContext } from '../../testing/policy-context.ts';
import { UpstreamError } from './client.ts';
import { reportAnswerHeaders, TargetGates } from './target-gate.ts';

const routeExtAuth = { url: 'http://127.0.0.1:1', http: {} } as NonNullable<BackendPolicy['extAuth']>;
const setStep = { request: { set: [{ name: 'x-step', value: '"a"' }], body: 'string(request.body).replace("shout", "whoami")' } };
const failingBody = { request: { body: 'request.body.nope' } };

describe('ownMembers: what a sub-backend sets differently from the route', () => {
  const rows: { name: string; route: BackendPolicy; sub: BackendPolicy; expect: string[] }[] = [
    { name: 'inherited members are not its own', route: { extAuth: routeExtAuth, sources: {} }, sub: { extAuth: routeExtAuth, sources: {} }, expect: [] },
    { name: 'a member the route lacks is its own', route: { sources: {} }, sub: { transformation: setStep, sources: {} }, expect: ['transformation'] },
    { name: 'a replaced member is its own, an inherited one next to it is not', route: { extAuth: routeExtAuth, transformation: failingBody, sources: {} }, sub: { extAuth: routeExtAuth, transformation: setStep, sources: {} }, expect: ['transformation'] },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(ownMembers(row.route, row.sub, ['extAuth', 'transformation']), row.expect));
});

describe('TargetGates: a target\'s own request steps, per message sent to it', () => {
  const pools = new UpstreamPools();
  after(() => pools.close(0));
  const noErrors = (m: string) => assert.fail(m);
  const compile = (policy: BackendPolicy) => compileBackendPolicy(policy, compileBackend(backend('mcp', [1]), pools, noErrors), pools, noErrors, undefined, undefined, 'mcp');
  const route = (a: Partial<BackendPolicy>, extra: Partial<BackendPolicy> = {}): BackendPolicy => ({ ...extra, sources: {}, subBackends: { a: { ...extra, ...a, sources: {} } } });

  it('targets that only inherit the route\'s steps have none of their own: no gate, nothing per message', () => {
    const runtime = compile(route({}, { extAuth: routeExtAuth }));
    assert.equal(TargetGates.needed(runtime, ['a', 'b']), false);
  });

  it('an inherited route extAuth is not compiled into the target\'s steps (it runs once per request, not again per call)', () => {
    const runtime = compile(route({ transformation: setStep }, { extAuth: routeExtAuth }));
    const own = runtime.subBackend('a');
    assert.notEqual(own, runtime);
    assert.equal(own.extAuth, undefined);
    assert.notEqual(own.transformation, undefined);
  });

  it('runs on the message: its header and body changes come back for that call only; the client request is untouched', async () => {
    const runtime = compile(route({ transformation: setStep }));
    assert.equal(TargetGates.needed(runtime, ['a', 'b']), true);
    const parent = fakePolicyContext({ method: 'POST', body: '{"client":"shout"}', headers: { 'x-client': '1' } });
    const gates = new TargetGates(runtime, parent);
    assert.equal(gates.for('b'), undefined, 'b has no steps of its own');
    const gate = gates.for('a');
    assert.ok(gate);
    const changes = await gate('a', '{"method":"tools/call","params":{"name":"shout"}}');
    assert.deepEqual([...changes.headers], [['x-step', 'a']]);
    assert.equal(changes.body, '{"method":"tools/call","params":{"name":"whoami"}}');
    assert.equal(parent.upstreamHeaders['x-step'], undefined, 'the client request\'s headers stay as they were');
    assert.equal(parent.sentBody, undefined, 'the client request\'s body stays as it was');
    const stream = await gate('a', undefined);
    assert.deepEqual([...stream.headers], [['x-step', 'a']], 'a GET stream (no message) gets the headers');
  });

  it('its response.body transforms the target\'s answer to that message (id kept); a failing one is a refused call, 500 transformation_failed', async () => {
    const answerStep = { response: { body: 'string(response.body).replace("one", "two")' } };
    const gate = new TargetGates(compile(route({ transformation: answerStep })), fakePolicyContext({ method: 'POST' })).for('a');
    assert.ok(gate);
    const changes = await gate('a', '{}');
    assert.ok(changes.answer);
    assert.deepEqual(changes.answer({ jsonrpc: '2.0', id: 7, result: { v: 'one' } }), { jsonrpc: '2.0', id: 7, result: { v: 'two' } });
    const broken = await new TargetGates(compile(route({ transformation: { response: { body: '"not json"' } } })), fakePolicyContext()).for('a')?.('a', '{}');
    assert.ok(broken?.answer);
    assert.throws(() => broken.answer?.({ jsonrpc: '2.0', id: 1, result: {} }), (err: unknown) => err instanceof UpstreamError && err.refusal?.code === 'transformation_failed');
  });

  it('its response header changes come back as answerHeaders for the client\'s answer, not applied to the client request\'s own effects', async () => {
    const headerStep = { response: { set: [{ name: 'x-target', value: '"a"' }], remove: ['x-drop'] } };
    const parent = fakePolicyContext({ method: 'POST' });
    const gate = new TargetGates(compile(route({ transformation: headerStep })), parent).for('a');
    assert.ok(gate);
    const changes = await gate('a', '{}');
    assert.equal(changes.answerHeaders?.length, 1);
    const headers: Record<string, string | string[]> = { 'x-drop': '1', 'content-type': 'application/json' };
    for (const mutate of changes.answerHeaders ?? []) mutate(headers, 200);
    assert.deepEqual(headers, { 'content-type': 'application/json', 'x-target': 'a' });
    assert.equal(parent.responseMutations.length, 0, 'the request\'s own effects are left to the transport (a shared answer never gets them)');
    const reported: unknown[] = [];
    reportAnswerHeaders(changes, (c) => reported.push(c));
    reportAnswerHeaders(changes, undefined);
    reportAnswerHeaders(await new TargetGates(compile(route({ transformation: setStep })), fakePolicyContext({ method: 'POST' })).for('a')!('a', '{}'), (c) => reported.push(c));
    assert.deepEqual(reported, [changes.answerHeaders], 'reported once, and only by a leg that has some');
  });

  it('a refusal is an UpstreamError `refused` with the status and code of the answer', async () => {
    const runtime = compile(route({ transformation: failingBody }));
    const gate = new TargetGates(runtime, fakePolicyContext({ method: 'POST' })).for('a');
    assert.ok(gate);
    await assert.rejects(gate('a', '{}'), (err: unknown) => {
      assert.ok(err instanceof UpstreamError);
      assert.equal(err.failure, 'refused');
      assert.deepEqual(err.refusal, { status: 500, code: 'transformation_failed' });
      return true;
    });
  });

  it('without the request\'s policy context the steps cannot run: refused (fails closed)', async () => {
    const gate = new TargetGates(compile(route({ transformation: setStep })), undefined).for('a');
    assert.ok(gate);
    await assert.rejects(gate('a', '{}'), (err: unknown) => err instanceof UpstreamError && err.failure === 'refused' && err.refusal?.status === 500);
  });
});
