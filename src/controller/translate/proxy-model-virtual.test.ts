import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import type { AiProviderIR } from '../../ir/ai.ts';
import { lowerVirtual, type LowerTarget } from './proxy-model-virtual.ts';
import type { Problem } from './status/conditions.ts';

const model = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyModel', metadata: { name, namespace: 'ns' }, spec } as KubeObject);
const MODELS = [
  model('exact', { provider: 'VendorA', match: { model: 'gpt-4o' } }),
  model('family', { provider: 'VendorA', match: { model: 'llama-*' } }),
  model('virtual', { virtualModel: { failover: { targets: [] } } }),
  { ...model('elsewhere', { provider: 'VendorA' }), metadata: { name: 'elsewhere', namespace: 'other' } } as KubeObject,
];
/** The provider a target lowers to, its pinned model visible in the name. */
const lowerTarget: LowerTarget = (_target, name, pin) => ({ name: `${name}=${pin}`, provider: { providerA: { model: pin } } }) as AiProviderIR;

const run = (virtual: Record<string, unknown>) => {
  const problems: Problem[] = [];
  const lowered = lowerVirtual(virtual, 'ns/v', 'ns', MODELS, problems, lowerTarget);
  return { lowered, problems: problems.map((p) => `${p.reason}: ${p.message}`) };
};
const names = (lowered: ReturnType<typeof run>['lowered']) => lowered?.groups.map((g) => g.providers.map((p) => p.name));

describe('lowerVirtual', () => {
  it('failover: priority groups, lower first, equal priorities together', () => {
    const { lowered, problems } = run({ failover: { targets: [{ modelRef: { name: 'family' }, model: 'llama-3', priority: 5 }, { modelRef: { name: 'exact' }, priority: 0 }, { modelRef: { name: 'exact' }, model: 'gpt-4o-mini', priority: 5 }] } });
    assert.deepEqual(problems, []);
    assert.deepEqual(names(lowered), [['ns/v#1:exact=gpt-4o'], ['ns/v#0:family=llama-3', 'ns/v#2:exact=gpt-4o-mini']]);
    assert.equal(lowered?.choice, undefined);
  });

  it('weighted: one group per target, weights in order, default 1', () => {
    const { lowered, problems } = run({ weighted: { targets: [{ modelRef: { name: 'exact' }, weight: 0 }, { modelRef: { name: 'family' }, model: 'llama-3' }] } });
    assert.deepEqual(problems, []);
    assert.deepEqual(names(lowered), [['ns/v#0:exact=gpt-4o'], ['ns/v#1:family=llama-3']]);
    assert.deepEqual(lowered?.choice, { kind: 'weighted', weights: [0, 1] });
  });

  it('conditional: one group per target, the conditions in order, the fallback without when', () => {
    const { lowered, problems } = run({ conditional: { targets: [{ modelRef: { name: 'exact' }, when: 'request.headers["x"] == "y"' }, { modelRef: { name: 'family' }, model: 'llama-3' }] } });
    assert.deepEqual(problems, []);
    assert.deepEqual(lowered?.choice, { kind: 'conditional', branches: [{ when: 'request.headers["x"] == "y"' }, {}] });
  });

  const REFUSALS: { name: string; virtual: Record<string, unknown>; want: string[] }[] = [
    { name: 'no kind', virtual: {}, want: ['Invalid: spec.virtualModel: one of failover, weighted or conditional is required'] },
    { name: 'no targets', virtual: { weighted: { targets: [] } }, want: ['Invalid: spec.virtualModel.weighted.targets: 1..64 targets'] },
    { name: '65 targets', virtual: { failover: { targets: Array.from({ length: 65 }, () => ({ modelRef: { name: 'exact' }, priority: 0 })) } }, want: ['Invalid: spec.virtualModel.failover.targets: 1..64 targets'] },
    { name: 'a missing target', virtual: { weighted: { targets: [{ modelRef: { name: 'gone' } }] } }, want: ['ModelNotFound: spec.virtualModel.weighted.targets[0].modelRef: ProxyModel ns/gone not found'] },
    { name: 'a target in another namespace', virtual: { weighted: { targets: [{ modelRef: { name: 'elsewhere' } }] } }, want: ['ModelNotFound: spec.virtualModel.weighted.targets[0].modelRef: ProxyModel ns/elsewhere not found'] },
    { name: 'a virtual target', virtual: { conditional: { targets: [{ modelRef: { name: 'virtual' } }] } }, want: ['Invalid: spec.virtualModel.conditional.targets[0].modelRef: virtual is a virtual model; a target is a model with a provider'] },
    { name: 'a wildcard target without model', virtual: { weighted: { targets: [{ modelRef: { name: 'family' } }] } }, want: ['Invalid: spec.virtualModel.weighted.targets[0].model: required, family matches a wildcard'] },
    { name: 'a negative weight', virtual: { weighted: { targets: [{ modelRef: { name: 'exact' }, weight: -1 }] } }, want: ['Invalid: spec.virtualModel.weighted.targets[0].weight: an integer 0..1000000'] },
    { name: 'a fractional weight', virtual: { weighted: { targets: [{ modelRef: { name: 'exact' }, weight: 0.5 }] } }, want: ['Invalid: spec.virtualModel.weighted.targets[0].weight: an integer 0..1000000'] },
    { name: 'every weight 0', virtual: { weighted: { targets: [{ modelRef: { name: 'exact' }, weight: 0 }] } }, want: ['Invalid: spec.virtualModel.weighted.targets: at least one target must have a weight above 0'] },
    { name: 'a fallback that is not last', virtual: { conditional: { targets: [{ modelRef: { name: 'exact' } }, { modelRef: { name: 'exact' }, when: 'true' }] } }, want: ['Invalid: spec.virtualModel.conditional.targets[0].when: only the last target may omit when (the fallback)'] },
    { name: 'a when that is not CEL', virtual: { conditional: { targets: [{ modelRef: { name: 'exact' }, when: 'request.headers[' }] } }, want: ['Invalid: spec.virtualModel.conditional.targets[0].when: invalid CEL expression'] },
    { name: 'a when that is not a bool', virtual: { conditional: { targets: [{ modelRef: { name: 'exact' }, when: '"gold"' }] } }, want: ['Invalid: spec.virtualModel.conditional.targets[0].when: invalid CEL expression'] },
  ];
  for (const row of REFUSALS) {
    it(`refused: ${row.name}`, () => {
      const { lowered, problems } = run(row.virtual);
      assert.equal(lowered, undefined);
      assert.equal(problems.length, row.want.length, problems.join('\n'));
      row.want.forEach((w, i) => assert.ok(problems[i].startsWith(w), `${problems[i]}\n does not start with\n${w}`));
    });
  }
});
