/**
 * The request steps of the backend-policy layer for upstream calls a backend kind makes itself
 * (AI provider calls, MCP target calls): an invalid policy refuses (nothing sent), then extAuth
 * and transformation run on the request's policy context; their header changes are returned for
 * the upstream request. Shared so every kind gates the same way.
 */
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { CompiledBackendPolicy } from './compile.ts';
import { FAIL_CLOSED } from './forward.ts';
import { hasRequestSteps, runRequestSteps } from './request-steps.ts';
import type { PolicyContext } from '../context.ts';
import type { DirectResponse, PolicyResult } from '../result.ts';
import { NO_HEADER_CHANGES as NO_CHANGES, type HeaderChanges } from './policy-headers.ts';

export type PolicyGate =
  | { readonly kind: 'refused'; readonly response: DirectResponse }
  | { readonly kind: 'passed'; readonly headers: HeaderChanges };

const PASSED: PolicyGate = Object.freeze({ kind: 'passed', headers: NO_CHANGES });
const REFUSED: PolicyGate = Object.freeze({ kind: 'refused', response: FAIL_CLOSED });

/**
 * Runs the backend policy of one upstream call (a provider attempt, an MCP request's targets). `runtime` is the compiled policy the
 * pipeline handed over (undefined when the handler is driven without one: then a policy with
 * request steps cannot be applied and fails closed too). `ran` remembers the outcome per
 * compiled policy within one request, so a failover to a provider under the same policy does not
 * ask the authorization service twice or transform twice.
 */
export function gateUpstreamCall(
  runtime: CompiledBackendPolicy | undefined,
  effective: BackendPolicy | undefined,
  ctx: PolicyContext | undefined,
  ran: Map<CompiledBackendPolicy, PolicyGate>,
): PolicyGate | Promise<PolicyGate> {
  if ((effective?.invalid?.length ?? 0) > 0) return REFUSED;
  if (!runtime) return effective?.extAuth !== undefined || effective?.transformation !== undefined ? REFUSED : PASSED;
  if (runtime.invalid.length > 0) return REFUSED;
  if (!hasRequestSteps(runtime)) return PASSED;
  const earlier = ran.get(runtime);
  if (earlier) return earlier;
  // The pipeline makes a context whenever the policy needs one; without it nothing can be checked.
  if (!ctx) return REFUSED;
  const before = { ...ctx.upstreamHeaders };
  const settle = (result: PolicyResult): PolicyGate => {
    const gate: PolicyGate = result.action === 'respond' ? { kind: 'refused', response: result.response } : { kind: 'passed', headers: headerChanges(before, ctx.upstreamHeaders) };
    ran.set(runtime, gate);
    return gate;
  };
  const result = runRequestSteps(runtime, ctx);
  return result instanceof Promise ? result.then(settle) : settle(result);
}

function headerChanges(before: Readonly<Record<string, string | string[] | undefined>>, after: Readonly<Record<string, string | string[] | undefined>>): HeaderChanges {
  const changes = new Map<string, string | undefined>();
  for (const [name, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : value;
    const was = before[name];
    if ((Array.isArray(was) ? was.join(', ') : was) !== joined) changes.set(name.toLowerCase(), joined);
  }
  for (const name of Object.keys(before)) if (after[name] === undefined) changes.set(name.toLowerCase(), undefined);
  return changes.size === 0 ? NO_CHANGES : changes;
}
