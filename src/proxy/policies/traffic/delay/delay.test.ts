import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile } from '../../../../cel/index.ts';
import { createActivation } from '../../../../cel/index.ts';
import type { TrafficPolicy } from '../../../../ir/policy.ts';
import { fakePolicyContext } from '../../../testing/policy-context.ts';
import { compileDelay, delayMs } from './delay.ts';

const valueOf = (expression: string): unknown => {
  const c = compile(expression);
  assert.ok(c.ok);
  const r = c.program.evaluate(createActivation({}));
  assert.ok(r.ok);
  return r.value;
};

describe('delay', () => {
  const cases = [
    { name: 'a duration string', expression: '"1s500ms"', ms: 1500 },
    { name: 'a CEL duration', expression: 'duration("250ms")', ms: 250 },
    { name: 'milliseconds as int', expression: '20', ms: 20 },
    { name: 'milliseconds as double', expression: '2.5', ms: 2.5 },
    { name: 'a negative number', expression: '-5', ms: -5 },
    { name: 'something else', expression: '[1]', ms: undefined },
  ];
  for (const c of cases) it(c.name, () => assert.equal(delayMs(valueOf(c.expression)), c.ms));

  const deps = { logger: undefined as never, policy: { sources: {} } as TrafficPolicy };

  it('waits and records the time against the request timeout', async () => {
    const ctx = fakePolicyContext({ headers: { 'x-delay': '5' } });
    const result = compileDelay({ duration: 'int(request.headers["x-delay"])' }, deps).onRequest(ctx);
    assert.ok(result instanceof Promise);
    assert.equal((await result).action, 'continue');
    assert.equal(ctx.upstream.delayedMs, 5);
  });

  it('injects nothing for non-positive or failing values', () => {
    for (const duration of ['0', '-1', 'request.headers["missing"]', '"0s"']) {
      const result = compileDelay({ duration }, deps).onRequest(fakePolicyContext());
      assert.ok(!(result instanceof Promise), duration);
    }
  });

  it('rejects invalid CEL at compile time', () => assert.throws(() => compileDelay({ duration: '1 +' }, deps), /invalid CEL/));
});
