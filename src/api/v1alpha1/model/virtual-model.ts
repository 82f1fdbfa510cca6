/** Virtual models: weighted, failover or conditional routing over other ProxyModels. */
import { Int, JsonObject, List, Obj, Opt, Str } from '../schema/build.ts';
import { exactlyOne, fallbackLast } from '../schema/rules.ts';
import { CELExpression, LongString } from '../scalars.ts';

const ModelRef = () => Obj({ name: Str(1, 253) }, { description: 'a ProxyModel in the same namespace' });

export const VirtualModel = () =>
  Obj({
    weighted: Opt(JsonObject('weighted split over models')),
    failover: Opt(Obj({
      targets: List(Obj({
        modelRef: ModelRef(),
        model: Opt(LongString({ description: 'required when modelRef is a wildcard match' })),
        priority: Int(0, 1_000_000, { description: 'lower is preferred' }),
      }), { min: 1, max: 64 }),
    })),
    conditional: Opt(Obj({
      targets: List(Obj({
        modelRef: ModelRef(),
        model: Opt(LongString()),
        when: Opt(CELExpression({ description: 'the first target whose condition holds wins' })),
      }), { min: 1, max: 64, rules: [fallbackLast('when')] }),
    })),
  }, { rules: [exactlyOne(['weighted', 'failover', 'conditional'])] });
