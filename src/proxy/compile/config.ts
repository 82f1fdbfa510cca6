import type { SecureContext, SecureContextOptions } from 'node:tls';
import type { Logger } from '../../common/logger.ts';
import type { Dispatcher } from 'undici';
import type { Bind, Listener, ProxyConfig, RouteRule } from '../../ir/types.ts';
import { compileBackend, type CompiledBackend } from '../backends/backend.ts';
import type { BackendHandler, BackendHandlers } from '../backends/handlers.ts';
import type { UpstreamPools } from '../policies/backend/pools.ts';
import { HostTable } from '../routing/host.ts';
import type { RouteTable } from '../routing/route-table.ts';
import type { CertificatePair, SecureContextCache } from './tls-contexts.ts';
import { endpointResolver } from './endpoints.ts';
import { compileRule, type CompiledRule } from './rule.ts';
import { BackendPolicyCompiler } from '../policies/backend/compile.ts';
import type { HealthStates } from '../policies/backend/health.ts';
import { compileFrontend, type CompiledFrontend } from '../policies/frontend/compile.ts';
import type { SharedConnections } from '../ext/connections.ts';
import { CompiledLifecycle } from './lifecycle.ts';
import { keepBackend, keptBackend, keptRule, reuseMemoFor, ruleMayBeKept, RuleWatch, type ReuseMemo } from './reuse.ts';
import { runToEnd, type SlicedJob } from './slices.ts';
import { backendEpoch, listenerTable, type ListenerTableContext } from './listener-tables.ts';
import { compileTrafficPolicy, type CompiledTrafficPolicy } from '../policies/chain.ts';
import type { StepDeps } from '../policies/step.ts';
import { compileTracing, type CompiledTracing } from '../telemetry/tracing/compile.ts';
import { compileLogExport, type CompiledLogExport } from '../telemetry/logs/compile.ts';
import { baseUrl, withUrlFallback, type EndpointResolver } from '../ext/endpoint.ts';
import type { PolicyEndpoint } from '../../ir/policy.ts';

export interface CompiledListener {
  readonly key: string;
  /** `namespace/name` of the Gateway, for metrics and logs. */
  readonly gateway: string;
  readonly sectionName: string;
  readonly routes: RouteTable<CompiledRule>;
  /** The listener's PreRouting traffic policy: runs before a route is chosen and may change what routing sees. */
  readonly preRouting: CompiledTrafficPolicy | undefined;
}

export interface CompiledTLS {
  /** By SNI: exact > longest wildcard > catch-all. */
  readonly bySni: HostTable<SecureContext>;
  /** For clients that send no SNI, or a name no listener claims. */
  readonly fallback: SecureContext;
  /** The same certificate as PEM: node's default context (no SNI) is built from options. */
  readonly fallbackPair: CertificatePair;
}

export interface CompiledBind {
  readonly key: string;
  readonly irPort: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly listeners: HostTable<CompiledListener>;
  /** Present on HTTPS binds with at least one usable certificate. */
  readonly tls: CompiledTLS | undefined;
  /** The bind's frontend policy (connection handling, HTTP/TLS settings, access log). */
  readonly frontend: CompiledFrontend | undefined;
  /** Some listener has a PreRouting policy: requests pick their listener before routing. */
  readonly hasPreRouting: boolean;
  /** frontend `tracing`: absent, requests make no spans (telemetry/tracing). */
  readonly tracing?: CompiledTracing;
  /** frontend `accessLog.otlp`: absent, the access log goes to stdout only (telemetry/logs). */
  readonly accessLogExport?: CompiledLogExport;
}

export interface CompiledConfig {
  readonly source: ProxyConfig;
  readonly binds: readonly CompiledBind[];
  /** Every upstream pool this config may dispatch to (the rest can be closed after the swap). */
  readonly dispatchers: ReadonlySet<Dispatcher>;
  /** Every in-process backend handler this config uses. */
  readonly handlers: ReadonlySet<BackendHandler>;
  /** The config's own resources (policy clients): retired after the swap that replaces it. */
  readonly lifecycle: CompiledLifecycle;
}

export interface CompileContext {
  readonly pools: UpstreamPools;
  readonly secureContexts: SecureContextCache;
  readonly logger: Logger;
  /** In-process backend handlers (MCP, LLM …); absent in tests that only forward. */
  readonly handlers?: BackendHandlers;
  /** Connections to external services shared across config versions (absent: each client owns its own). */
  readonly connections?: SharedConnections;
  /** Passive health kept across config versions (absent: each compile starts healthy). */
  readonly healthStates?: HealthStates;
}

export interface CompileResult {
  readonly compiled: CompiledConfig;
  readonly errors: string[];
}

/**
 * Resolve the whole IR once: backends to pools, rules to filters and weighted pickers, listeners to
 * route tables, certificates to secure contexts. A broken piece is reported and left out; the
 * rest of the config still serves (DESIGN.md: bad config degrades one object).
 */
export function compileConfig(config: ProxyConfig, ctx: CompileContext): CompileResult {
  return runToEnd(compileConfigJob(config, ctx));
}

/**
 * compileConfig as a job that yields after each backend, rule and listener, so the runtime can
 * compile a large config in slices on the loop that serves requests (runInSlices): a config of
 * 10,000 routes with a CEL policy each takes about 0.5 s, which in one piece stalled every request.
 * Nothing it builds is visible to requests until the runtime swaps the result in.
 */
export function* compileConfigJob(config: ProxyConfig, ctx: CompileContext): SlicedJob<CompileResult> {
  const errors: string[] = [];
  const endpoints = endpointResolver(config);
  const onError = (m: string) => errors.push(m);

  // Backends and rules the previous versions compiled from the same IR objects are reused (reuse.ts).
  const memo = reuseMemoFor(ctx);
  const backends = new Map<string, CompiledBackend>();
  for (const [key, b] of Object.entries(config.backends)) {
    let compiled = keptBackend(memo, b, ctx);
    if (!compiled) {
      const before = errors.length;
      compiled = compileBackend(b, ctx.pools, onError, ctx.handlers);
      keepBackend(memo, b, compiled, errors.length > before);
    }
    backends.set(key, compiled);
    yield;
  }
  const backendOf = (key: string) => backends.get(key);
  const epoch = backendEpoch(memo, backends);

  const lifecycle = new CompiledLifecycle();
  const backendPolicies = new BackendPolicyCompiler(ctx.pools, onError, ctx.healthStates, { logger: ctx.logger, endpoints, connections: ctx.connections, lifecycle });
  const rules = new Map<string, CompiledRule>();
  const ruleDeps = { logger: ctx.logger, backendPolicies, endpoints, connections: ctx.connections, lifecycle };
  // Made at the first rule that may be kept: one per compile, with its deps (reuse.ts RuleWatch).
  let watch: { readonly watch: RuleWatch; readonly deps: Parameters<typeof compileRule>[4] } | undefined;
  const watched = () => {
    if (watch) return watch;
    const w = new RuleWatch(memo, lifecycle, endpoints);
    return (watch = { watch: w, deps: { ...ruleDeps, ...w.deps } });
  };
  const ruleOf = (routeKey: string, index: number): CompiledRule | undefined => {
    const route = config.routes[routeKey];
    const rule = route?.rules[index];
    if (!rule) return undefined;
    let compiled = rules.get(rule.key);
    if (!compiled) {
      compiled = reusedOrCompiledRule(memo, route.key, rule, backendOf, onError, ruleDeps, watched);
      rules.set(rule.key, compiled);
    }
    return compiled;
  };

  const stepDeps = { logger: ctx.logger, endpoints, connections: ctx.connections, lifecycle };
  // Listener route tables reused when nothing they were built from changed (listener-tables.ts).
  const claimRule = (key: string, compiled: CompiledRule): boolean => {
    if (rules.has(key)) return false;
    rules.set(key, compiled);
    return true;
  };
  const tables: ListenerTableContext = { config, memo, epoch, ruleOf, backendOf, claimRule, onError };
  const binds: CompiledBind[] = [];
  for (const bind of config.binds) binds.push(yield* compileBind(bind, tables, ctx, onError, stepDeps));
  const dispatchers = new Set<Dispatcher>();
  for (const b of backends.values()) for (const t of b.endpoints.all()) dispatchers.add(t.dispatcher);
  for (const d of backendPolicies.dispatchers) dispatchers.add(d);
  const handlers = new Set<BackendHandler>();
  for (const b of backends.values()) if (b.handler) handlers.add(b.handler);
  return { compiled: { source: config, binds, dispatchers, handlers, lifecycle }, errors };
}

/**
 * A rule as an earlier version compiled it when that is still right (same IR rule object, same
 * compiled backends read, nothing per-config touched: reuse.ts), else compiled now — and, when it
 * may be kept, with its backend reads, errors and uses of the per-config resources recorded.
 */
function reusedOrCompiledRule(
  memo: ReuseMemo,
  routeKey: string,
  rule: RouteRule,
  backendOf: (key: string) => CompiledBackend | undefined,
  onError: (m: string) => void,
  deps: Parameters<typeof compileRule>[4] & { readonly endpoints: EndpointResolver; readonly lifecycle: CompiledLifecycle },
  watched: () => { readonly watch: RuleWatch; readonly deps: Parameters<typeof compileRule>[4] },
): CompiledRule {
  const kept = keptRule(memo, routeKey, rule, backendOf);
  if (kept) {
    for (const m of kept.errors) onError(m);
    return kept.compiled;
  }
  if (!ruleMayBeKept(rule)) return compileRule(routeKey, rule, backendOf, onError, deps);
  const { watch, deps: watchedDeps } = watched();
  const read: (string | CompiledBackend | undefined)[] = [];
  let errors: string[] | undefined;
  const readingBackendOf = (key: string) => {
    const b = backendOf(key);
    read.push(key, b);
    return b;
  };
  const recordingOnError = (m: string) => {
    (errors ??= []).push(m);
    onError(m);
  };
  const { result: compiled, used } = watch.compiling(() => compileRule(routeKey, rule, readingBackendOf, recordingOnError, watchedDeps));
  // A compile that used the per-config resources is not kept (nor an earlier one of the same IR
  // rule): the next version compiles it again.
  // slice(): exactly as long as its entries (an array grown by push keeps room for 17; one a rule).
  if (used) memo.rules.delete(rule);
  else memo.rules.set(rule, { compiled, routeKey, read: read.slice(), errors: errors ?? NO_ERRORS, touched: watch.touched });
  return compiled;
}

/** Shared by the kept rules that reported nothing (nearly all). */
const NO_ERRORS: readonly string[] = [];

function* compileBind(
  bind: Bind,
  tables: ListenerTableContext,
  ctx: CompileContext,
  onError: (m: string) => void,
  stepDeps: Omit<StepDeps, 'policy'>,
): SlicedJob<CompiledBind> {
  const listeners: (readonly [string | null, CompiledListener])[] = [];
  for (const l of bind.listeners) {
    // Rules carry most of the cost (CEL programs, filters, backend policies) and compile as the
    // table reaches their route: the table yields after each route.
    const routes: RouteTable<CompiledRule> = yield* listenerTable(l, tables);
    listeners.push([l.hostname, {
      key: l.key,
      gateway: `${l.gateway.namespace}/${l.gateway.name}`,
      sectionName: l.sectionName,
      routes,
      preRouting: l.preRouting ? compileTrafficPolicy(l.preRouting, stepDeps, (m) => onError(`${l.key}: PreRouting: ${m}`)) : undefined,
    }]);
    yield;
  }
  const frontend = compileFrontend(bind.frontend, (m) => onError(`${bind.key}: ${m}`));
  return {
    key: bind.key,
    irPort: bind.port,
    protocol: bind.protocol,
    listeners: new HostTable(listeners),
    tls: bind.protocol === 'HTTPS' ? compileTLS(bind.listeners, ctx, onError, frontend?.tls.contextOptions) : undefined,
    frontend,
    hasPreRouting: listeners.some(([, l]) => l.preRouting !== undefined),
    ...bindTracing(bind, stepDeps, onError),
    ...bindLogExport(bind, frontend, stepDeps, onError),
  };
}

/** frontend `accessLog.otlp` of a bind: its logger provider lives and retires with this config. */
function bindLogExport(bind: Bind, frontend: CompiledFrontend | undefined, stepDeps: Omit<StepDeps, 'policy'>, onError: (m: string) => void): { accessLogExport?: CompiledLogExport } {
  const otlp = bind.frontend?.accessLog?.otlp;
  if (otlp === undefined) return {};
  const accessLogExport = compileLogExport(otlp, frontend?.accessLog, { endpoint: () => otlpUrl(otlp, stepDeps.endpoints), lifecycle: stepDeps.lifecycle }, (m) => onError(`${bind.key}: frontend.accessLog.otlp: ${m}`));
  return accessLogExport ? { accessLogExport } : {};
}

/** frontend `tracing` of a bind: its tracer provider lives and retires with this config. */
function bindTracing(bind: Bind, stepDeps: Omit<StepDeps, 'policy'>, onError: (m: string) => void): { tracing?: CompiledTracing } {
  const policy = bind.frontend?.tracing;
  if (policy === undefined) return {};
  const tracing = compileTracing(policy, { endpoint: () => otlpUrl(policy, stepDeps.endpoints), lifecycle: stepDeps.lifecycle }, (m) => onError(`${bind.key}: frontend.tracing: ${m}`));
  return tracing ? { tracing } : {};
}

/**
 * A policy endpoint as a URL: its own `url`, or one ready endpoint of its backend, the next in
 * turn each time a config version compiles it (the exporter keeps one URL; https when the
 * backend's policies set tls, with the system CAs).
 */
function otlpUrl(endpoint: PolicyEndpoint, endpoints: EndpointResolver | undefined): string {
  if (endpoint.url !== undefined) return endpoint.url;
  return baseUrl(withUrlFallback(endpoints)(endpoint).next());
}

function compileTLS(listeners: readonly Listener[], ctx: CompileContext, onError: (m: string) => void, options?: SecureContextOptions): CompiledTLS | undefined {
  const entries: [string | null, SecureContext][] = [];
  const pairs: CertificatePair[] = [];
  for (const l of listeners) {
    const cert = l.tls?.certificates[0];
    if (!cert) {
      onError(`${l.key}: HTTPS listener has no certificate`);
      continue;
    }
    try {
      entries.push([l.hostname, ctx.secureContexts.get(cert, options)]);
      pairs.push(cert);
    } catch (err) {
      onError(`${l.key}: invalid certificate: ${(err as Error).message}`);
    }
  }
  if (entries.length === 0) return undefined;
  const fallbackIndex = Math.max(0, entries.findIndex(([h]) => h === null));
  return { bySni: new HostTable(entries), fallback: entries[fallbackIndex][1], fallbackPair: pairs[fallbackIndex] };
}
