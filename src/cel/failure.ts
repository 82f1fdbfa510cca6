import type { Activation } from './activation.ts';
import type { Program } from './compile.ts';
import { evalBool, evalString, evalValue } from './evaluate.ts';
import type { JsonValue } from './values.ts';

/**
 * What a failing expression means, feature by feature (SPEC.md "Errors" and authorization
 * semantics). Features call these instead of deciding on their own, so the rules live in one place.
 */

/** Log and trace attributes: a failing expression drops the pair (returns undefined). */
export function attributeValue(program: Program, activation: Activation): JsonValue | undefined {
  const result = evalValue(program, activation);
  return result.ok ? result.value : undefined;
}

/** The label value used when a metric label expression fails. */
export const UNKNOWN_LABEL = 'unknown';

/** Metric labels: a failing expression (or one that is not a scalar) yields `unknown`. */
export function metricLabel(program: Program, activation: Activation): string {
  const result = evalString(program, activation);
  return result.ok ? result.value : UNKNOWN_LABEL;
}

/** Filters (access log filter, conditional policies): only a true result passes; failure is false. */
export function conditionHolds(program: Program, activation: Activation): boolean {
  return evalBool(program, activation) === true;
}

export type AuthorizationAction = 'Allow' | 'Deny' | 'Require';

export interface AuthorizationRule {
  action: AuthorizationAction;
  /** All must be true for the rule to match (SPEC: policy.matchExpressions). */
  matchExpressions: readonly Program[];
}

/** A rule matches only when every expression is true; any failure is reported as 'error'. */
export function ruleMatches(rule: AuthorizationRule, activation: Activation): boolean | 'error' {
  let failed = false;
  for (const program of rule.matchExpressions) {
    const r = evalBool(program, activation);
    if (r === false) return false;
    if (r === 'error') failed = true;
  }
  return failed ? 'error' : true;
}

export type AuthorizationDecision =
  | { allowed: true }
  | { allowed: false; reason: 'denied' | 'no_allow_matched' | 'require_not_met' };

/**
 * SPEC.md: any matching Deny denies; every Require must match; when Allow rules exist one must
 * match. A failing expression fails safe for each action: a failing Deny does not deny, a failing
 * Require is not met (denies), a failing Allow does not allow.
 */
export function authorize(rules: readonly AuthorizationRule[], activation: Activation): AuthorizationDecision {
  let hasAllow = false;
  let allowMatched = false;
  for (const rule of rules) {
    const matched = ruleMatches(rule, activation);
    switch (rule.action) {
      case 'Deny':
        if (matched === true) return { allowed: false, reason: 'denied' };
        break;
      case 'Require':
        if (matched !== true) return { allowed: false, reason: 'require_not_met' };
        break;
      case 'Allow':
        hasAllow = true;
        if (matched === true) allowMatched = true;
        break;
    }
  }
  if (hasAllow && !allowMatched) return { allowed: false, reason: 'no_allow_matched' };
  return { allowed: true };
}
