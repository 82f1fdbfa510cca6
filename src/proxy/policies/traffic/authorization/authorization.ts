import { authorize, referencesBody, type AuthorizationRule } from '../../../../cel/index.ts';
import { activationOf, program } from '../../cel.ts';
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, respondError, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

const DENIED = respondError(403, 'forbidden', 'the request is not authorized');

/**
 * traffic.authorization: the rules every contributing policy accumulated (the translator merged
 * them), decided by `authorize()` so that Allow/Deny/Require and what a failing expression means
 * live in one place (src/cel/failure.ts). Runs after authentication, so `jwt.*`, `apiKey.*` and
 * `basicAuth.*` hold the identities established for this request.
 */
export const compileAuthorization: StepCompiler<'authorization'> = (member, deps) => {
  const rules: AuthorizationRule[] = member.rules.map((rule, i) => ({
    action: rule.action,
    matchExpressions: rule.matchExpressions.map((e, j) => program(e, `authorization.rules[${i}] (${rule.source}).matchExpressions[${j}]`, ['bool'])),
  }));
  const needsBody = rules.some((r) => r.matchExpressions.some(referencesBody));
  const decide = (ctx: PolicyContext): PolicyResult => {
    const decision = authorize(rules, activationOf(ctx));
    if (decision.allowed) return CONTINUE;
    deps.logger.debug({ route: ctx.names.route, reason: decision.reason }, 'authorization denied the request');
    return DENIED;
  };
  return {
    member: 'authorization',
    // Expressions read request.body synchronously: buffer it first when one needs it (413 past the limit).
    onRequest: needsBody ? (ctx) => ctx.readBody().then(() => decide(ctx)) : decide,
  };
};
