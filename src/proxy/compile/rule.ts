import type { BackendPolicy, TrafficPolicy } from '../../ir/policy.ts';
import type { RouteRule } from '../../ir/types.ts';
import type { CompiledBackend } from '../backends/backend.ts';
import { WeightedPicker } from '../routing/picker.ts';
import type { ClientFormatOf } from '../backends/client-format.ts';
import { compileFilters, mergeFilters, type CompiledFilters } from '../filters/compile.ts';
import { compileTrafficPolicy, type CompiledTrafficPolicy } from '../policies/chain.ts';
import type { StepDeps } from '../policies/step.ts';
import type { BackendPolicyCompiler, CompiledBackendPolicy } from '../policies/backend/compile.ts';

/** One weighted backendRef with the rule's filters already merged in front of its own. */
export interface BackendPick {
  /** null when the reference is invalid or names a backend missing from the config: 500. */
  readonly backend: CompiledBackend | null;
  readonly filters: CompiledFilters;
  /** The effective backend policy for this rule × backend (IR form), by listener when it differs. */
  backendPolicyFor(listenerKey: string): BackendPolicy | undefined;
  /** The same policy compiled (endpoints under its TLS/HTTP settings, credentials, health). */
  compiledPolicyFor(listenerKey: string): CompiledBackendPolicy | undefined;
  /** The format this backend's clients read gateway errors in, on a listener (docs/errors.md). */
  clientFormatFor(listenerKey: string): ClientFormatOf;
}

export interface CompiledRule {
  readonly key: string;
  readonly routeKey: string;
  readonly filters: CompiledFilters;
  /** Empty when the rule has no backend with weight > 0 (500 unless it redirects). */
  readonly backends: WeightedPicker<BackendPick>;
  readonly requestTimeoutMs: number | undefined;
  readonly backendTimeoutMs: number | undefined;
  /** The effective PostRouting traffic policy on this listener (undefined: none applies). */
  trafficFor(listenerKey: string): CompiledTrafficPolicy | undefined;
}

export function compileRule(
  routeKey: string,
  rule: RouteRule,
  backendOf: (key: string) => CompiledBackend | undefined,
  onError: (message: string) => void,
  deps: Omit<StepDeps, 'policy'> & { readonly backendPolicies?: BackendPolicyCompiler },
): CompiledRule {
  const report = (m: string) => onError(`${rule.key}: ${m}`);
  const policyOf = (p: TrafficPolicy) => compileTrafficPolicy(p, deps, report);
  const traffic = rule.traffic ? policyOf(rule.traffic) : undefined;
  const byListener = new Map<string, CompiledTrafficPolicy>();
  for (const [listenerKey, p] of Object.entries(rule.trafficByListener ?? {})) byListener.set(listenerKey, policyOf(p));
  const filters = compileFilters(rule.filters, backendOf, report);
  const picks = rule.backends.map((wb) => {
    let backend: CompiledBackend | null = null;
    if (wb.backendKey !== null) {
      backend = backendOf(wb.backendKey) ?? null;
      if (!backend) report(`backend ${wb.backendKey} is not in the config`);
    }
    const byListener = wb.backendPolicyByListener;
    const backendPolicyFor = byListener ? (listenerKey: string) => byListener[listenerKey] ?? wb.backendPolicy : () => wb.backendPolicy;
    const compiledPolicyFor = compiledBackendPolicies(wb.backendPolicy, byListener, backend, deps.backendPolicies);
    const clientFormatFor = clientFormats(wb.backendPolicy, byListener, backend);
    return { weight: wb.weight, value: { backend, filters: mergeFilters(filters, compileFilters(wb.filters, backendOf, report)), backendPolicyFor, compiledPolicyFor, clientFormatFor } };
  });
  return {
    key: rule.key,
    routeKey,
    filters,
    backends: new WeightedPicker(picks),
    requestTimeoutMs: positive(rule.timeouts?.requestMs),
    backendTimeoutMs: positive(rule.timeouts?.backendRequestMs),
    trafficFor: byListener.size === 0 ? () => traffic : (listenerKey) => byListener.get(listenerKey) ?? traffic,
  };
}

/** Compiles the plain and per-listener backend policies up front (config time), for lookups per request. */
function compiledBackendPolicies(
  plain: BackendPolicy | undefined,
  byListener: Readonly<Record<string, BackendPolicy>> | undefined,
  backend: CompiledBackend | null,
  compiler: BackendPolicyCompiler | undefined,
): (listenerKey: string) => CompiledBackendPolicy | undefined {
  // AI provider calls, MCP requests and agent runtime invocations go through this layer (per provider or target: subBackend()); MCP targets write their credentials in the MCP handler.
  if (!backend || !compiler || (backend.handler && backend.kind !== 'ai' && backend.kind !== 'mcp' && backend.kind !== 'agentRuntime' && backend.handler.usesBackendPolicy !== true)) return () => undefined;
  const compiledPlain = plain ? compiler.compile(plain, backend, backend.kind) : undefined;
  if (!byListener) return () => compiledPlain;
  const compiled = new Map(Object.entries(byListener).map(([key, p]) => [key, compiler.compile(p, backend, backend.kind)] as const));
  return (listenerKey) => compiled.get(listenerKey) ?? compiledPlain;
}

/** The client format per listener, decided here once (config time) so requests only look it up. */
function clientFormats(
  plain: BackendPolicy | undefined,
  byListener: Readonly<Record<string, BackendPolicy>> | undefined,
  backend: CompiledBackend | null,
): (listenerKey: string) => ClientFormatOf {
  if (!backend) return () => 'gateway';
  const formatPlain = backend.clientFormat(plain);
  if (!byListener) return () => formatPlain;
  const formats = new Map(Object.entries(byListener).map(([key, p]) => [key, backend.clientFormat(p)] as const));
  return (listenerKey) => formats.get(listenerKey) ?? formatPlain;
}

/** The Gateway API uses 0 for "no timeout". */
function positive(ms: number | undefined): number | undefined {
  return ms !== undefined && ms > 0 ? ms : undefined;
}
