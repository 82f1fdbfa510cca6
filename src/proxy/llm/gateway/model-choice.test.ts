import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CelInput } from '../../../cel/index.ts';
import type { AiProviderIR, ModelRouteIR } from '../../../ir/ai.ts';
import { CompiledModel } from './model-choice.ts';

const provider = (name: string): AiProviderIR => ({ name, provider: { providerA: { model: name } } });
const route = (extra: Partial<ModelRouteIR>, targets = ['a', 'b', 'c']): ModelRouteIR => ({
  id: 'ns/virtual', pattern: { kind: 'exact', name: 'virtual' }, visibility: 'Public', groups: targets.map((t) => ({ providers: [provider(t)] })), ...extra,
});
const input = (headers: Record<string, string>, jwt?: Record<string, unknown>): (() => CelInput) => () => ({ request: { method: 'POST', url: '/v1/chat/completions', headers }, ...(jwt ? { jwt } : {}) } as CelInput);

/** A deterministic generator (mulberry32): the same draws on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const firstOf = (model: CompiledModel, headers: Record<string, string> = {}, jwt?: Record<string, unknown>): string => {
  const pick = model.choose('virtual', input(headers, jwt));
  return pick.kind === 'picked' ? pick.picker.order()[0].name : pick.kind;
};

describe('CompiledModel: weighted', () => {
  it('draws targets in proportion to their weights; a weight 0 target is never drawn', () => {
    const model = new CompiledModel(route({ choice: { kind: 'weighted', weights: [3, 1, 0] } }), undefined, seeded(7));
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 4000; i++) counts[firstOf(model)]++;
    assert.equal(counts.c, 0);
    assert.ok(Math.abs(counts.a / 4000 - 0.75) < 0.03, `a drew ${counts.a} of 4000`);
    assert.ok(Math.abs(counts.b / 4000 - 0.25) < 0.03, `b drew ${counts.b} of 4000`);
  });

  it('fails over from the drawn target to the other weighted targets, heaviest first, never to a weight 0 one', () => {
    // random() = 0.9 lands in b's share (the last quarter of [3, 1]).
    const model = new CompiledModel(route({ choice: { kind: 'weighted', weights: [3, 1, 0] } }), undefined, () => 0.9);
    const pick = model.choose('virtual', undefined);
    assert.equal(pick.kind, 'picked');
    if (pick.kind === 'picked') assert.deepEqual(pick.picker.order().map((p) => p.name), ['b', 'a']);
  });

  it('reads nothing of the request', () => {
    const model = new CompiledModel(route({ choice: { kind: 'weighted', weights: [1, 1, 1] } }), undefined);
    assert.equal(model.needsInput, false);
    assert.equal(model.choose('virtual', () => assert.fail('the CEL input was built')).kind, 'picked');
  });
});

describe('CompiledModel: conditional', () => {
  const model = new CompiledModel(route({
    choice: { kind: 'conditional', branches: [{ when: 'request.headers["x-tier"] == "gold"' }, { when: 'jwt.plan == "team"' }, {}] },
  }), undefined);
  const rows: { name: string; headers?: Record<string, string>; jwt?: Record<string, unknown>; want: string }[] = [
    { name: 'the first condition that holds wins', headers: { 'x-tier': 'gold' }, jwt: { plan: 'team' }, want: 'a' },
    { name: 'a later condition', jwt: { plan: 'team' }, want: 'b' },
    { name: 'nothing holds: the fallback', headers: { 'x-tier': 'silver' }, want: 'c' },
    { name: 'a failing expression (no jwt) does not match: the fallback', headers: {}, want: 'c' },
  ];
  for (const row of rows) it(row.name, () => assert.equal(firstOf(model, row.headers, row.jwt), row.want));

  it('without a fallback, no condition holding is no-target', () => {
    const strict = new CompiledModel(route({ choice: { kind: 'conditional', branches: [{ when: 'llm.requestModel == "other"' }, { when: 'request.headers["x-tier"] == "gold"' }] } }, ['a', 'b']), undefined);
    assert.equal(firstOf(strict), 'no-target');
    assert.equal(firstOf(strict, { 'x-tier': 'gold' }), 'b');
  });

  it('an expression that does not compile is never taken', () => {
    const broken = new CompiledModel(route({ choice: { kind: 'conditional', branches: [{ when: 'request.headers[' }, {}] } }, ['a', 'b']), undefined);
    assert.equal(firstOf(broken), 'b');
  });
});

describe('CompiledModel: authorization', () => {
  const rule = (action: 'Allow' | 'Deny' | 'Require', expression: string): ModelRouteIR['authorization'] => ({ rules: [{ action, matchExpressions: [expression], source: 'ProxyModel/ns/virtual' }] });
  const rows: { name: string; authorization: ModelRouteIR['authorization']; headers: Record<string, string>; want: string }[] = [
    { name: 'Allow matching', authorization: rule('Allow', 'request.headers["x-team"] == "a"'), headers: { 'x-team': 'a' }, want: 'a' },
    { name: 'Allow not matching denies', authorization: rule('Allow', 'request.headers["x-team"] == "a"'), headers: { 'x-team': 'b' }, want: 'denied' },
    { name: 'Allow failing (missing header) denies', authorization: rule('Allow', 'request.headers["x-team"] == "a"'), headers: {}, want: 'denied' },
    { name: 'Deny matching denies', authorization: rule('Deny', 'request.headers["x-team"] == "b"'), headers: { 'x-team': 'b' }, want: 'denied' },
    { name: 'Deny failing does not deny', authorization: rule('Deny', 'request.headers["x-team"] == "b"'), headers: {}, want: 'a' },
    { name: 'Require on the model name', authorization: rule('Require', 'llm.requestModel == "virtual"'), headers: {}, want: 'a' },
    { name: 'a rule that does not compile denies (fail closed)', authorization: rule('Allow', 'request.headers['), headers: { 'x-team': 'a' }, want: 'denied' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const model = new CompiledModel(route({ authorization: row.authorization }, ['a']), undefined);
      assert.equal(model.needsInput, true);
      assert.equal(firstOf(model, row.headers), row.want);
    });
  }

  it('a plain model reads nothing of the request', () => {
    const model = new CompiledModel(route({}, ['a']), undefined);
    assert.equal(model.needsInput, false);
    assert.equal(model.choose('virtual', () => assert.fail('the CEL input was built')).kind, 'picked');
  });
});
