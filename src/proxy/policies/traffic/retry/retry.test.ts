import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryBudget } from './attempts.ts';
import type { RetryPolicySpec } from '../../../../ir/policy.ts';
import { compileRetryPolicy } from './retry.ts';

describe('retry policy', () => {
  const valid: { name: string; spec: RetryPolicySpec; attempts: number; codes: number[]; backoffMs: number }[] = [
    { name: 'defaults: one retry, no codes, no backoff', spec: {}, attempts: 1, codes: [], backoffMs: 0 },
    { name: 'codes, attempts and a Duration backoff', spec: { codes: [502, 503], attempts: 3, backoff: '1s500ms' }, attempts: 3, codes: [502, 503], backoffMs: 1500 },
    { name: 'zero attempts disables retries', spec: { attempts: 0 }, attempts: 0, codes: [], backoffMs: 0 },
  ];
  for (const c of valid) {
    it(c.name, () => {
      const p = compileRetryPolicy(c.spec);
      assert.equal(p.attempts, c.attempts);
      assert.deepEqual([...p.codes], c.codes);
      assert.equal(p.backoffMs, c.backoffMs);
    });
  }
  const invalid: { name: string; spec: RetryPolicySpec; error: RegExp }[] = [
    { name: 'a code outside 400..599', spec: { codes: [302] }, error: /codes/ },
    { name: 'negative attempts', spec: { attempts: -1 }, error: /attempts/ },
    { name: 'an unparseable backoff', spec: { backoff: 'soon' }, error: /backoff/ },
  ];
  for (const c of invalid) it(`rejects ${c.name}`, () => assert.throws(() => compileRetryPolicy(c.spec), c.error));

  it('spends the budget on listed statuses and connect failures only', () => {
    const budget = new RetryBudget(compileRetryPolicy({ codes: [503], attempts: 2 }), true);
    assert.equal(budget.takeForStatus(500), false);
    assert.equal(budget.takeForStatus(503), true);
    assert.equal(budget.takeForConnectFailure(), true);
    assert.equal(budget.takeForStatus(503), false, 'budget spent');
  });

  it('never retries a request whose body cannot be replayed', () => {
    const budget = new RetryBudget(compileRetryPolicy({ codes: [503], attempts: 2 }), false);
    assert.equal(budget.takeForStatus(503), false);
    assert.equal(budget.takeForConnectFailure(), false);
  });
});
