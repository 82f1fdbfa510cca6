/** Virtual models: weighted, failover or conditional routing over other ProxyModels. */
import { Int, List, Obj, Opt, Str } from '../schema/build.ts';
import { exactlyOne, fallbackLast, has, type CrossFieldRule, type Node } from '../schema/rules.ts';
import { CELExpression, LongString } from '../scalars.ts';

const ModelRef = () => Obj({ name: Str(1, 253) }, { description: 'a ProxyModel in the same namespace' });

/** The upstream model a target sends (SPEC.md: required when modelRef is a wildcard match; the translator checks that). */
const TargetModel = () => Opt(LongString({ description: "the model name sent to the target's vendor; required when modelRef is a wildcard match, otherwise its exact match" }));

/** A weighted split needs some traffic to split: every weight 0 would leave the model unroutable. */
const somePositiveWeight: CrossFieldRule<readonly Node[]> = {
  path: '',
  message: 'at least one target must have a weight above 0',
  cel: 'self.exists(t, !has(t.weight) || t.weight > 0)',
  check: (self) => self.some((t) => !has(t, 'weight') || (typeof t.weight === 'number' && t.weight > 0)),
};

export const VirtualModel = () =>
  Obj({
    weighted: Opt(Obj({
      targets: List(Obj({
        modelRef: ModelRef(),
        model: TargetModel(),
        weight: Opt(Int(0, 1_000_000, { default: 1, description: "the target's share is weight / the sum of the weights; 0 never receives requests" })),
      }), { min: 1, max: 64, rules: [somePositiveWeight] }),
    }, { description: 'each request goes to one target, drawn in proportion to the weights' })),
    failover: Opt(Obj({
      targets: List(Obj({
        modelRef: ModelRef(),
        model: TargetModel(),
        priority: Int(0, 1_000_000, { description: 'lower is preferred' }),
      }), { min: 1, max: 64 }),
    })),
    conditional: Opt(Obj({
      targets: List(Obj({
        modelRef: ModelRef(),
        model: TargetModel(),
        when: Opt(CELExpression({ description: 'evaluated on the request in order; the first target whose condition is true wins (an expression that fails is false)' })),
      }), { min: 1, max: 64, rules: [fallbackLast('when')] }),
    })),
  }, { rules: [exactlyOne(['weighted', 'failover', 'conditional'])] });
