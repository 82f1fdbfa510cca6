import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RoundRobin, WeightedPicker } from './picker.ts';

describe('WeightedPicker', () => {
  const picker = new WeightedPicker([
    { weight: 1, value: 'a' },
    { weight: 0, value: 'never' },
    { weight: 3, value: 'b' },
  ]);
  const cases = [
    { random: 0, want: 'a' },
    { random: 0.24, want: 'a' },
    { random: 0.25, want: 'b' },
    { random: 0.999, want: 'b' },
  ];
  for (const c of cases) it(`random ${c.random} picks ${c.want}`, () => assert.equal(picker.pick(c.random), c.want));

  it('never picks a zero weight', () => {
    for (let i = 0; i < 200; i++) assert.notEqual(picker.pick(), 'never');
  });

  it('is empty when every weight is zero', () => {
    const none = new WeightedPicker([{ weight: 0, value: 'x' }]);
    assert.equal(none.empty, true);
    assert.equal(none.pick(), undefined);
  });
});

describe('RoundRobin', () => {
  it('cycles through the items in order', () => {
    const rr = new RoundRobin(['a', 'b', 'c']);
    assert.deepEqual([rr.next(), rr.next(), rr.next(), rr.next()], ['a', 'b', 'c', 'a']);
  });

  it('has nothing to give when empty', () => assert.equal(new RoundRobin([]).next(), undefined));
});
