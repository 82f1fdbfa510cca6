import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AiBackendIR } from '../../../ir/ai.ts';
import { ProviderPicker } from './picker.ts';

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
