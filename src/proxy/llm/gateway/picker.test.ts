import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AiBackendIR } from '../../../ir/ai.ts';
import { ProviderPicker } from './picker.ts';
import { MAX_RETRY_AFTER_MS, ProviderHealth } from './provider-health.ts';

/** Groups of named providers: `[['a', 'b'], ['c']]` is two priority groups. */
function groups(names: readonly (readonly string[])[]): AiBackendIR['groups'] {
  return names.map((group) => ({ providers: group.map((name) => ({ name, provider: { providerA: {} } })) }));
}

function orders(picker: ProviderPicker, requests: number): string[][] {
  return Array.from({ length: requests }, () => picker.order().map((p) => p.name));
}

describe('ProviderPicker', () => {
  const cases: { name: string; groups: string[][]; expect: string[][] }[] = [
    { name: 'one provider is always the only attempt', groups: [['only']], expect: [['only'], ['only'], ['only']] },
    {
      name: 'providers of one group take turns being first; the others follow as failover',
      groups: [['a', 'b', 'c']],
      expect: [['a', 'b', 'c'], ['b', 'c', 'a'], ['c', 'a', 'b'], ['a', 'b', 'c']],
    },
    {
      name: 'a lower priority group is tried only after every provider of the group before it',
      groups: [['a', 'b'], ['x']],
      expect: [['a', 'b', 'x'], ['b', 'a', 'x'], ['a', 'b', 'x']],
    },
    {
      name: 'each group rotates on its own',
      groups: [['a', 'b'], ['x', 'y', 'z']],
      expect: [['a', 'b', 'x', 'y', 'z'], ['b', 'a', 'y', 'z', 'x'], ['a', 'b', 'z', 'x', 'y'], ['b', 'a', 'x', 'y', 'z']],
    },
    { name: 'single-provider groups keep their priority order', groups: [['p1'], ['p2'], ['p3']], expect: [['p1', 'p2', 'p3'], ['p1', 'p2', 'p3']] },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(orders(new ProviderPicker(groups(c.groups)), c.expect.length), c.expect));

  it('spreads first attempts evenly over a group', () => {
    const firsts = new Map<string, number>();
    for (const order of orders(new ProviderPicker(groups([['a', 'b', 'c'], ['z']])), 300)) firsts.set(order[0], (firsts.get(order[0]) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(firsts), { a: 100, b: 100, c: 100 });
  });
});

describe('ProviderPicker, health-weighted (power of two choices over ProviderHealth)', () => {
  /** A picker over `names` with a fake clock and a scripted "random" (each call takes the next value, then repeats the last). */
  function weighted(names: readonly (readonly string[])[], randoms: readonly number[] = [0]) {
    let now = 1_000_000;
    const health = new ProviderHealth('backend', names.flat(), undefined, () => now);
    let r = 0;
    const random = () => randoms[Math.min(r++, randoms.length - 1)];
    const picker = new ProviderPicker(groups(names), health, random);
    const at = (name: string) => health.indexOf(name);
    return {
      health, picker, at,
      order: () => picker.order().map((p) => p.name),
      advance: (ms: number) => { now += ms; },
      /** One finished attempt of `ms` with `status` on provider `name`. */
      answer: (name: string, status: number, ms = 10, headers: Record<string, string> = {}, spec?: Parameters<ProviderHealth['answered']>[4]) => {
        const started = health.begin(at(name));
        now += ms;
        health.answered(at(name), started, status, headers, spec);
      },
    };
  }
  const evictOnce = { eviction: { durationMs: 1000 }, unhealthyCondition: 'response.code >= 500' };

  it('the cheaper of the two drawn goes first, the rest of the group by cost, then the next group', () => {
    const w = weighted([['a', 'b', 'c'], ['z']], [0, 0]); // draws a, then b
    w.answer('a', 503);
    w.answer('b', 200, 50);
    w.answer('c', 200, 10);
    assert.deepEqual(w.order(), ['b', 'c', 'a', 'z'], 'a (failed) loses to b; c and a follow by cost');
  });

  it('a provider with failures loses the draw to a healthy one', () => {
    const w = weighted([['a', 'b']]);
    w.answer('a', 500);
    for (let i = 0; i < 20; i++) assert.equal(w.order()[0], 'b');
  });

  it('a slower provider loses the draw to a faster one of the same score', () => {
    const w = weighted([['a', 'b']]);
    w.answer('a', 200, 400);
    w.answer('b', 200, 40);
    assert.equal(w.order()[0], 'b');
  });

  it('a provider stalling on an attempt ranks worse while it stalls, before any timeout', () => {
    const w = weighted([['a', 'b']]);
    w.answer('a', 200, 20);
    w.answer('b', 200, 20);
    w.health.begin(w.at('a')); // no answer yet
    w.advance(500);
    w.health.begin(w.at('b')); // one in flight each: only the age of a's tells them apart
    for (let i = 0; i < 10; i++) assert.equal(w.order()[0], 'b');
  });

  it('a stalled attempt is not hidden by fresh ones in flight next to it (its oldest attempt counts)', () => {
    const w = weighted([['a', 'b']], [0, 0]); // draws a first: a wins ties
    w.answer('a', 200, 20);
    w.answer('b', 200, 20);
    w.health.begin(w.at('a'));
    w.advance(100);
    for (let i = 0; i < 9; i++) w.health.begin(w.at('a'));
    for (let i = 0; i < 10; i++) w.health.begin(w.at('b'));
    assert.equal(w.order()[0], 'b');
  });

  it('a failed provider gets tried again once its lost score has recovered in the ranking', () => {
    const w = weighted([['a', 'b']], [0, 0]); // always draws a then b: a wins ties
    w.answer('a', 503);
    w.answer('b', 200);
    assert.equal(w.order()[0], 'b');
    w.advance(3_000);
    assert.equal(w.order()[0], 'b', 'not yet: about 10 of the 30 lost points still count');
    w.advance(20_000); // the lost points have all but gone: a tie, which the first drawn (a) wins
    assert.equal(w.order()[0], 'a');
  });

  it('evicted providers go last, after every group; a group with all evicted hands over to the next', () => {
    const w = weighted([['a', 'b'], ['x']]);
    w.answer('a', 503, 10, {}, evictOnce);
    assert.deepEqual(w.order(), ['b', 'x', 'a']);
    w.answer('b', 503, 10, {}, evictOnce);
    assert.deepEqual(w.order(), ['x', 'a', 'b'], 'both evicted: x first, then the evicted ones, soonest back first');
  });

  it('when every provider is evicted, the evicted ones are used', () => {
    const w = weighted([['a'], ['b']]);
    w.answer('a', 503, 10, {}, evictOnce);
    w.answer('b', 503, 10, {}, evictOnce);
    assert.deepEqual(w.order(), ['a', 'b']);
  });

  it('an eviction ends after its duration and the provider is picked again', () => {
    const w = weighted([['a', 'b']], [0, 0]);
    w.answer('b', 200, 10);
    w.answer('a', 503, 10, {}, { eviction: { durationMs: 1000, restoreHealth: 100 }, unhealthyCondition: 'true' });
    assert.deepEqual(w.order(), ['b', 'a']);
    w.advance(1000);
    assert.equal(w.health.available(w.at('a')), true);
    assert.equal(w.order()[0], 'a', 'restoreHealth 100: back at full score, a wins the tie it draws first');
  });

  const retryAfter: { name: string; headers: Record<string, string>; evictedMs: number | undefined }[] = [
    { name: 'retry-after seconds', headers: { 'retry-after': '7' }, evictedMs: 7000 },
    { name: 'retry-after-ms', headers: { 'retry-after-ms': '1500' }, evictedMs: 1500 },
    { name: 'retry-after as an HTTP date', headers: { 'retry-after': new Date(1_000_010 + 4000).toUTCString() }, evictedMs: undefined },
    { name: 'a huge retry-after is capped', headers: { 'retry-after': '86400' }, evictedMs: MAX_RETRY_AFTER_MS },
    { name: 'no retry-after: no eviction without a policy', headers: {}, evictedMs: 0 },
  ];
  for (const c of retryAfter) {
    it(`a 429 evicts for its Retry-After, without any health policy: ${c.name}`, () => {
      const w = weighted([['a', 'b']]);
      w.answer('a', 429, 10, c.headers);
      const until = w.health.evictedUntil(w.at('a'));
      if (c.evictedMs === undefined) assert.ok(until > w.health.now() && until <= w.health.now() + 4000, 'the date, to the second');
      else assert.equal(until === 0 ? 0 : until - w.health.now(), c.evictedMs);
      if (until !== 0) assert.deepEqual(w.order(), ['b', 'a']);
    });
  }
});
