/** Local (per proxy) and global (rate limit service) rate limits. */
import { Int, List, Obj, OneOf, Opt } from '../schema/build.ts';
import { atLeastOne, exactlyOne } from '../schema/rules.ts';
import { CELExpression, ShortString, TinyString } from '../scalars.ts';
import { endpointProperties, endpointRule } from '../refs.ts';
import { FailureMode } from '../policies/prompt-guard.ts';
import { conditionalAlone, conditionalList } from '../policies/ext-auth.ts';

const LocalRateLimit = () =>
  Obj({
    requests: Opt(Int(1, undefined, { description: 'requests per unit' })),
    tokens: Opt(Int(1, undefined, { description: 'input+output tokens per unit; counted after completion' })),
    unit: OneOf(['Seconds', 'Minutes', 'Hours'] as const),
    burst: Opt(Int(0, undefined, { description: 'extra allowance in a short period' })),
  }, { rules: [exactlyOne(['requests', 'tokens'])] });

const Descriptor = () =>
  Obj({
    entries: List(Obj({ name: TinyString(), expression: CELExpression() }), { min: 1, max: 16 }),
    unit: Opt(OneOf(['Requests', 'Tokens'] as const, { default: 'Requests' })),
    cost: Opt(CELExpression({ description: 'default 1 for Requests, the total token count for Tokens' })),
    limitOverride: Opt(CELExpression({ description: 'yields an object with unit and requestsPerUnit' })),
  });

const rateLimitMembers = () => ({
  local: Opt(List(LocalRateLimit(), { min: 1, max: 16, description: 'per proxy instance, no coordination' })),
  global: Opt(Obj({
    ...endpointProperties,
    failureMode: Opt(FailureMode()),
    domain: ShortString(),
    descriptors: List(Descriptor(), { min: 1, max: 16 }),
  }, { rules: [endpointRule()] })),
});

export const RateLimit = () => Obj(rateLimitMembers(), { rules: [atLeastOne(['local', 'global'])] });

/** Rate limits directly, or a conditional list of them (the first entry whose condition holds applies). */
export const RateLimitOrConditional = () =>
  Obj({ ...rateLimitMembers(), conditional: Opt(conditionalList(RateLimit())) }, {
    description: 'rate limits, or a conditional list of them',
    rules: [conditionalAlone(['local', 'global']), atLeastOne(['local', 'global', 'conditional'])],
  });
