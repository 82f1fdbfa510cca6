import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakePolicyContext } from '../testing/policy-context.ts';
import { activationOf, program } from './cel.ts';

describe('activationOf', () => {
  it('shares one activation across steps until the identity changes', () => {
    const ctx = fakePolicyContext();
    const first = activationOf(ctx);
    assert.equal(activationOf(ctx), first);
    ctx.identity.extauthz = { user: 'bench' };
    const second = activationOf(ctx);
    assert.notEqual(second, first);
    const name = program('extauthz.user', 'test').evaluate(second);
    assert.deepEqual(name, { ok: true, value: 'bench' });
  });

  it('never shares an activation between requests', () => {
    assert.notEqual(activationOf(fakePolicyContext()), activationOf(fakePolicyContext()));
  });
});
