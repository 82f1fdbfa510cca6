/** Passive health: what counts as unhealthy and when an endpoint is evicted. */
import { Int, Obj, Opt } from '../schema/build.ts';
import { CELExpression, Duration } from '../scalars.ts';

export const Health = () =>
  Obj({
    unhealthyCondition: Opt(CELExpression({ description: 'default: any 5xx or connection failure lowers the health score' })),
    eviction: Opt(Obj({
      duration: Opt(Duration({ default: '3s', description: 'eviction time; backs off as duration x times evicted' })),
      restoreHealth: Opt(Int(0, 100, { description: 'health score on return; default the pre-eviction score' })),
      consecutiveFailures: Opt(Int(0)),
      healthThreshold: Opt(Int(0, 100, { description: 'EWMA health threshold' })),
    })),
  });
