import type { BackendPolicy } from '../../ir/policy.ts';
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

/**
 * A config of 10,000 routes holds 10,000 compiled rules (issue 15: the serving thread's memory),
 * so what a rule keeps is small: its lookups are made by the module-level factories below, whose
 * closures capture only the values they return — a closure made in compileRule's own scope would
 * keep its whole context alive (the IR rule, the compile's deps and error callbacks, and through
 * backendOf the compile job's maps of every backend and rule of that version) — and the common
 * cases (no per-listener policy, no policy at all) share one function across rules.
 */
export function compileRule(
  routeKey: string,
  rule: RouteRule,
  backendOf: (key: string) => CompiledBackend | undefined,
  onError: (message: string) => void,
  deps: Omit<StepDeps, 'policy'> & { readonly backendPolicies?: BackendPolicyCompiler },
): CompiledRule {
  const report = (m: string) => onError(`${rule.key}: ${m}`);
  const traffic = rule.traffic ? compileTrafficPolicy(rule.traffic, deps, report) : undefined;
  let byListener: Map<string, CompiledTrafficPolicy> | undefined;
  if (rule.trafficByListener) {
    for (const [listenerKey, p] of Object.entries(rule.trafficByListener)) (byListener ??= new Map()).set(listenerKey, compileTrafficPolicy(p, deps, report));
  }
  const filters = compileFilters(rule.filters, backendOf, report);
  const picks = rule.backends.map((wb) => ({ weight: wb.weight, value: backendPick(wb, filters, backendOf, report, deps.backendPolicies) }));
  return {
    key: rule.key,
    routeKey,
    filters,
    backends: new WeightedPicker(picks),
    requestTimeoutMs: positive(rule.timeouts?.requestMs),
    backendTimeoutMs: positive(rule.timeouts?.backendRequestMs),
    trafficFor: byListenerOr(byListener, traffic),
  };
}

function backendPick(
  wb: RouteRule['backends'][number],
  ruleFilters: CompiledFilters,
  backendOf: (key: string) => CompiledBackend | undefined,
  report: (m: string) => void,
  backendPolicies: BackendPolicyCompiler | undefined,
): BackendPick {
  let backend: CompiledBackend | null = null;
  if (wb.backendKey !== null) {
    backend = backendOf(wb.backendKey) ?? null;
    if (!backend) report(`backend ${wb.backendKey} is not in the config`);
  }
  const byListener = wb.backendPolicyByListener;
  return {
    backend,
    filters: mergeFilters(ruleFilters, compileFilters(wb.filters, backendOf, report)),
    backendPolicyFor: byListener ? recordOr(byListener, wb.backendPolicy) : constant(wb.backendPolicy),
    compiledPolicyFor: compiledBackendPolicies(wb.backendPolicy, byListener, backend, backendPolicies),
    clientFormatFor: clientFormats(wb.backendPolicy, byListener, backend),
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
  if (!backend || !compiler || (backend.handler && backend.kind !== 'ai' && backend.kind !== 'mcp' && backend.kind !== 'agentRuntime' && backend.handler.usesBackendPolicy !== true)) return constant(undefined);
  const compiledPlain = plain ? compiler.compile(plain, backend, backend.kind) : undefined;
  if (!byListener) return constant(compiledPlain);
  return byListenerOr(new Map(Object.entries(byListener).map(([key, p]) => [key, compiler.compile(p, backend, backend.kind)] as const)), compiledPlain);
}

/** The client format per listener, decided here once (config time) so requests only look it up. */
function clientFormats(
  plain: BackendPolicy | undefined,
  byListener: Readonly<Record<string, BackendPolicy>> | undefined,
  backend: CompiledBackend | null,
): (listenerKey: string) => ClientFormatOf {
  if (!backend) return constant('gateway');
  const formatPlain = backend.clientFormat(plain);
  if (!byListener) return constant(formatPlain);
  return byListenerOr(new Map(Object.entries(byListener).map(([key, p]) => [key, backend.clientFormat(p)] as const)), formatPlain);
}

/** One function per primitive value (undefined, a client format name), shared by every rule that returns it. */
const constants = new Map<unknown, () => unknown>();

/** `() => value`; for a primitive, the same function each time (no closure per rule for the common cases). */
function constant<T>(value: T): () => T {
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) return () => value;
  let fn = constants.get(value);
  if (fn === undefined) constants.set(value, (fn = () => value));
  return fn as () => T;
}

/** The value for a listener from `byListener`, else `fallback` (capturing only those two). */
function byListenerOr<T>(byListener: ReadonlyMap<string, T> | undefined, fallback: T): (listenerKey: string) => T {
  if (byListener === undefined || byListener.size === 0) return constant(fallback);
  return (listenerKey) => byListener.get(listenerKey) ?? fallback;
}

function recordOr<T>(byListener: Readonly<Record<string, T>>, fallback: T): (listenerKey: string) => T {
  return (listenerKey) => byListener[listenerKey] ?? fallback;
}

/** The Gateway API uses 0 for "no timeout". */
function positive(ms: number | undefined): number | undefined {
  return ms !== undefined && ms > 0 ? ms : undefined;
}
