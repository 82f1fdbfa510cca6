/** CEL authorization rules (HTTP level, MCP level, network level and per model). */
import { List, Obj, OneOf, Opt } from '../schema/build.ts';
import { CELExpression } from '../scalars.ts';

export const AUTHORIZATION_ACTIONS = ['Allow', 'Deny', 'Require'] as const;

export const Authorization = (description = 'CEL authorization rule; rules from several policies accumulate') =>
  Obj({
    policy: Obj({
      matchExpressions: List(CELExpression(), { min: 1, max: 256, description: 'all must be true for the rule to match' }),
    }),
    action: Opt(OneOf(AUTHORIZATION_ACTIONS, { default: 'Allow', description: 'Allow: any matching Allow rule allows (and when Allow rules exist, one must match); Require: must match; Deny: a match denies' })),
  }, { description });
