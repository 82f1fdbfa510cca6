import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModelRouteIR } from '../../../ir/ai.ts';
import { ModelRouter } from './model-router.ts';

const entry = (id: string, pattern: ModelRouteIR['pattern'], visibility: 'Public' | 'Internal' = 'Public'): ModelRouteIR => ({
  id, pattern, visibility, groups: [{ providers: [{ name: id, provider: { providerA: {} } }] }],
});

// Already ordered most specific first, as the translator hands them over.
const MODELS = [entry('ai/gpt-4o', { kind: 'exact', name: 'gpt-4o' }), entry('ai/hidden', { kind: 'exact', name: 'hidden' }, 'Internal'), entry('ai/gpt', { kind: 'startsWith', literal: 'gpt-' })];

describe('ModelRouter', () => {
  const router = new ModelRouter(MODELS, undefined);
  const body = (value: unknown) => Buffer.from(JSON.stringify(value));
  const rows: { name: string; body: Buffer; want: string }[] = [
    { name: 'an exact model', body: body({ model: 'gpt-4o' }), want: 'picked:ai/gpt-4o' },
    { name: 'a wildcard model', body: body({ model: 'gpt-5' }), want: 'picked:ai/gpt' },
    { name: 'an Internal model is not requestable', body: body({ model: 'hidden' }), want: 'unknown' },
    { name: 'no match', body: body({ model: 'claude' }), want: 'unknown' },
    { name: 'no model', body: body({ messages: [] }), want: 'no-model' },
    { name: 'a model that is not a string', body: body({ model: 42 }), want: 'no-model' },
    { name: 'not JSON', body: Buffer.from('model=gpt-4o'), want: 'no-model' },
    { name: 'a JSON array', body: body([{ model: 'gpt-4o' }]), want: 'no-model' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const choice = router.choose(row.body);
      const got = choice.kind === 'picked' ? `picked:${choice.picker.order()[0].name}` : choice.kind;
      assert.equal(got, row.want);
    });
  }

  it('a model\'s authorization and a conditional model without a fallback answer denied and no-target, naming the model', () => {
    const guarded: ModelRouteIR = { ...entry('ai/guarded', { kind: 'exact', name: 'guarded' }), authorization: { rules: [{ action: 'Require', matchExpressions: ['request.headers["x-team"] == "red"'], source: 'test' }] } };
    const strict: ModelRouteIR = { ...entry('ai/strict', { kind: 'exact', name: 'strict' }), choice: { kind: 'conditional', branches: [{ when: 'request.headers["x-tier"] == "gold"' }] } };
    const routed = new ModelRouter([guarded, strict], undefined);
    const input = (headers: Record<string, string>) => () => ({ request: { method: 'POST', url: '/', headers } });
    assert.deepEqual(routed.choose(body({ model: 'guarded' }), input({ 'x-team': 'blue' })), { kind: 'denied', model: 'guarded' });
    assert.equal(routed.choose(body({ model: 'guarded' }), input({ 'x-team': 'red' })).kind, 'picked');
    assert.deepEqual(routed.choose(body({ model: 'strict' }), input({})), { kind: 'no-target', model: 'strict' });
    assert.equal(routed.choose(body({ model: 'strict' }), input({ 'x-tier': 'gold' })).kind, 'picked');
  });

  it('lists the Public exact models only, sorted, in both shapes', () => {
    const openai = JSON.parse(Buffer.from(router.catalog(false)).toString()) as { object: string; data: { id: string; object: string }[] };
    assert.equal(openai.object, 'list');
    assert.deepEqual(openai.data.map((m) => [m.id, m.object]), [['gpt-4o', 'model']]);
    const anthropic = JSON.parse(Buffer.from(router.catalog(true)).toString()) as { data: { id: string; type: string }[]; first_id: string; last_id: string; has_more: boolean };
    assert.deepEqual(anthropic.data.map((m) => [m.id, m.type]), [['gpt-4o', 'model']]);
    assert.deepEqual([anthropic.first_id, anthropic.last_id, anthropic.has_more], ['gpt-4o', 'gpt-4o', false]);
  });
});
