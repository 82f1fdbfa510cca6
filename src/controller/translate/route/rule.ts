import type { HTTPBackendRef, HTTPRouteRule } from '../../../api/gateway/index.ts';
import type { RouteRule, WeightedBackend } from '../../../ir/types.ts';
import type { BackendResolver } from '../backend.ts';
import { parseDuration } from '../duration.ts';
import { isDict, listOf } from '../read.ts';
import type { Problem } from '../status/conditions.ts';
import { translateFilters } from './filters.ts';
import { translateMatches } from './matches.ts';

export interface RuleResult {
  /** Absent when the rule is invalid: an invalid rule is dropped, the rest of the route still works. */
  readonly rule?: RouteRule;
  readonly invalid: readonly string[];
  readonly refs: readonly Problem[];
}

const MAX_WEIGHT = 1_000_000;

export function translateRule(spec: HTTPRouteRule, index: number, routeKey: string, resolver: BackendResolver, ruleCount = 1): RuleResult {
  const path = `spec.rules[${index}]`;
  const invalid: string[] = [];
  const refs: Problem[] = [];
  const { matches, invalid: matchProblems } = translateMatches(spec.matches, `${path}.matches`);
  invalid.push(...matchProblems);
  const ruleFilters = translateFilters(spec.filters, `${path}.filters`, matches, resolver);
  invalid.push(...ruleFilters.invalid);
  refs.push(...ruleFilters.refs);

  const backendRefs = listOf<HTTPBackendRef>(spec.backendRefs);
  const modelRule = { routeName: routeKey.slice(routeKey.indexOf('/') + 1), ruleIndex: index, ...(typeof spec.name === 'string' ? { ruleName: spec.name } : {}), ruleCount, backendRefCount: backendRefs.length, pathTypes: matches.map((m) => m.path?.type ?? 'PathPrefix') };
  const backends: WeightedBackend[] = backendRefs.map((ref, i) => {
    const at = `${path}.backendRefs[${i}]`;
    const weight = ref.weight ?? 1;
    if (!Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT) invalid.push(`${at}.weight must be an integer 0..${MAX_WEIGHT}`);
    const resolved = resolver.resolve(ref, at, modelRule);
    if (resolved.problem) refs.push(resolved.problem);
    const filters = translateFilters(ref.filters, `${at}.filters`, matches, resolver);
    invalid.push(...filters.invalid);
    refs.push(...filters.refs);
    return { backendKey: resolved.backendKey, weight: Number.isInteger(weight) ? weight : 0, filters: filters.filters };
  });

  const timeouts = translateTimeouts(spec.timeouts, `${path}.timeouts`, invalid);
  if (invalid.length > 0) return { invalid, refs };
  const rule: RouteRule = {
    // Joined: a flat string, not a template's tree of its parts (kept per rule in the IR).
    key: [routeKey, '/rule/', index].join(''),
    ...(typeof spec.name === 'string' && spec.name ? { name: spec.name } : {}),
    matches,
    filters: ruleFilters.filters,
    backends,
    ...(timeouts ? { timeouts } : {}),
  };
  return { rule, invalid, refs };
}

/** Gateway API durations to milliseconds; 0 keeps its Gateway API meaning (no timeout). backendRequest may not exceed request. */
function translateTimeouts(spec: unknown, path: string, invalid: string[]): RouteRule['timeouts'] {
  if (!isDict(spec)) return undefined;
  const read = (field: 'request' | 'backendRequest'): number | undefined => {
    const text = spec[field];
    if (text === undefined) return undefined;
    const ms = typeof text === 'string' ? parseDuration(text) : null;
    if (ms === null) invalid.push(`${path}.${field} ${JSON.stringify(text)} is not a Gateway API duration (1 to 4 groups of up to 5 digits with h, m, s or ms, e.g. 1m30s)`);
    return ms ?? undefined;
  };
  const requestMs = read('request');
  const backendRequestMs = read('backendRequest');
  if (requestMs !== undefined && requestMs > 0 && backendRequestMs !== undefined && (backendRequestMs === 0 || backendRequestMs > requestMs)) {
    invalid.push(`${path}.backendRequest (${spec.backendRequest as string}) must not be longer than ${path}.request (${spec.request as string})`);
  }
  if (requestMs === undefined && backendRequestMs === undefined) return undefined;
  return { ...(requestMs !== undefined ? { requestMs } : {}), ...(backendRequestMs !== undefined ? { backendRequestMs } : {}) };
}
