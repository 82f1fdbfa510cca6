import type { Dispatcher } from 'undici';
import type { Backend, RouteRule } from '../../ir/types.ts';
import type { Conditional, RateLimitPolicy, TrafficMember, TrafficPolicy } from '../../ir/policy.ts';
import type { CompiledBackend } from '../backends/backend.ts';
import type { BackendHandler } from '../backends/handlers.ts';
import type { EndpointResolver } from '../ext/endpoint.ts';
import type { ConfigLifecycle } from '../policies/step.ts';
import type { CompileContext } from './config.ts';
import type { CompiledRule } from './rule.ts';

/**
 * Compiled backends and rules kept across config versions, so that applying a config in which one
 * route changed compiles that route, not all 10,000 (issue 15: the translator hands unchanged IR
 * Routes and Backends over as the same objects). An entry is reused only when its IR object is
 * the same object and every input its compile read is identical; anything else compiles as before.
 *
 * Only pure results are kept: a rule is kept when its traffic policies use members that hold no
 * per-config resource (no clients retired with the config's lifecycle, no endpoint resolved
 * against that config's backends, no shared connection, no counters) and no backend policy
 * (pools under policy settings, health, credentials); and only when compiling it touched neither
 * the lifecycle nor the endpoint resolver (checked by wrapping them, not assumed).
 */
export interface ReuseMemo {
  readonly backends: WeakMap<Backend, KeptBackend>;
  readonly rules: WeakMap<RouteRule, KeptRule>;
  /** How many kept rules' flags were ever set (Touched): while it stays, no flag needs reading. */
  readonly touches: { count: number };
}

/**
 * Kept rules' "used the per-config resources" flag (one per config compile, shared by the rules it
 * kept: RuleWatch). Setting it counts on its memo's `touches`, so a listener's kept table learns
 * whether any of its 1,000s of rules was touched from one number (compile/listener-tables.ts)
 * instead of reading each flag per version.
 */
export class Touched {
  #value = false;
  readonly #touches: { count: number };

  constructor(touches: { count: number }) {
    this.#touches = touches;
  }

  get value(): boolean {
    return this.#value;
  }

  set value(value: boolean) {
    if (value && !this.#value) this.#touches.count++;
    this.#value = value;
  }
}

interface KeptBackend {
  readonly compiled: CompiledBackend;
  /** What compiling it acquired from the runtime: reuse only while the runtime hands out the same. */
  readonly dispatchers: readonly Dispatcher[];
  readonly handler: BackendHandler | undefined;
}

export interface KeptRule {
  readonly compiled: CompiledRule;
  readonly routeKey: string;
  /**
   * Each backend key the rule (and its filters) looked up, followed by the compiled backend it got
   * (key, backend, key, backend …): one small array a rule instead of a Map (issue 15: 10k rules).
   */
  readonly read: readonly (string | CompiledBackend | undefined)[];
  /** Its compile's error messages, reported again when it is reused. */
  readonly errors: readonly string[];
  /**
   * Set when anything holding its compile's deps used the lifecycle or the endpoint resolver after
   * that compile: shared by every rule kept from one config's compile (RuleWatch), so one use
   * makes all of them compile again — rare (only pure members are kept) and on the safe side.
   */
  readonly touched: Touched;
}

/**
 * Traffic members whose compiled step is a pure function of the IR member (and the logger), plus
 * a local-only rateLimit (localOnly below): anything else (a global rateLimit's service client,
 * extAuth/extProc clients, remote JWKS, retry budgets, members added later) makes a rule compile
 * anew every version.
 */
const PURE_TRAFFIC_MEMBERS: ReadonlySet<TrafficMember> = new Set<TrafficMember>([
  'directResponse', 'headerModifiers', 'cors', 'csrf', 'delay', 'hostRewrite', 'transformation',
  'apiKeyAuthentication', 'basicAuthentication', 'authorization', 'timeouts',
]);

/** One memo per runtime (its pools), dropped when anything else of the compile context changes. */
const memos = new WeakMap<object, { readonly ctx: ContextIdentity; readonly memo: ReuseMemo }>();

type ContextIdentity = readonly unknown[];

function identityOf(ctx: CompileContext): ContextIdentity {
  return [ctx.logger, ctx.handlers, ctx.connections, ctx.healthStates];
}

export function reuseMemoFor(ctx: CompileContext): ReuseMemo {
  const identity = identityOf(ctx);
  const known = memos.get(ctx.pools);
  if (known && known.ctx.every((v, i) => v === identity[i])) return known.memo;
  const memo: ReuseMemo = { backends: new WeakMap(), rules: new WeakMap(), touches: { count: 0 } };
  memos.set(ctx.pools, { ctx: identity, memo });
  return memo;
}

/**
 * The backend compiled for `b` by an earlier version, when the runtime still hands out the same
 * pools and handler for it (a pool closed since, or a handler replaced, compiles it anew).
 */
export function keptBackend(memo: ReuseMemo, b: Backend, ctx: CompileContext): CompiledBackend | undefined {
  const kept = memo.backends.get(b);
  if (!kept) return undefined;
  const targets = kept.compiled.endpoints.all();
  if (targets.length !== b.endpoints.length) return undefined;
  for (let i = 0; i < targets.length; i++) {
    if (ctx.pools.acquire(b.endpoints[i], kept.compiled.protocol) !== kept.dispatchers[i]) return undefined;
  }
  if (ctx.handlers?.acquire(b) !== kept.handler) return undefined;
  return kept.compiled;
}

/** Remembers a backend compiled without errors (one with errors compiles again, and reports again). */
export function keepBackend(memo: ReuseMemo, b: Backend, compiled: CompiledBackend, hadErrors: boolean): void {
  if (hadErrors) return;
  memo.backends.set(b, { compiled, dispatchers: compiled.endpoints.all().map((t) => t.dispatcher), handler: compiled.handler });
}

/** Whether a rule may be kept at all, from its IR alone. */
export function ruleMayBeKept(rule: RouteRule): boolean {
  if (rule.traffic && !pureTraffic(rule.traffic)) return false;
  if (rule.trafficByListener) for (const p of Object.values(rule.trafficByListener)) if (!pureTraffic(p)) return false;
  for (const wb of rule.backends) if (wb.backendPolicy !== undefined || wb.backendPolicyByListener !== undefined) return false;
  return true;
}

function pureTraffic(p: TrafficPolicy): boolean {
  for (const member of Object.keys(p) as (keyof TrafficPolicy)[]) {
    if (member === 'sources' || member === 'invalid' || p[member] === undefined) continue;
    if (PURE_TRAFFIC_MEMBERS.has(member as TrafficMember)) continue;
    if (member === 'rateLimit' && p.rateLimit !== undefined && localOnly(p.rateLimit)) continue;
    return false;
  }
  return true;
}

/**
 * A rate limit with local buckets only: its buckets live outside the compiled rule (rate-limit.ts
 * keeps them per policy source and entries, across config versions), so a kept rule counts into
 * the same buckets a recompiled one would get. A global limit holds a service client closed with
 * its compiled step, so it is never kept.
 */
function localOnly(limit: RateLimitPolicy | Conditional<RateLimitPolicy>): boolean {
  const branches = 'conditional' in limit ? limit.conditional.map((c) => c.policy) : [limit];
  return branches.every((branch) => branch.global === undefined);
}

/** The rule compiled for the same IR rule object by an earlier version, when every input it read is the same. */
export function keptRule(memo: ReuseMemo, routeKey: string, rule: RouteRule, backendOf: (key: string) => CompiledBackend | undefined): KeptRule | undefined {
  const kept = memo.rules.get(rule);
  if (!kept || kept.touched.value || kept.routeKey !== routeKey) return undefined;
  return readsHold(kept, backendOf) ? kept : undefined;
}

/** Whether each backend a kept rule looked up is still the compiled backend it got. */
export function readsHold(kept: KeptRule, backendOf: (key: string) => CompiledBackend | undefined): boolean {
  const { read } = kept;
  for (let i = 0; i < read.length; i += 2) if (backendOf(read[i] as string) !== read[i + 1]) return false;
  return true;
}

/** The backend keys a kept rule looked up (KeptRule.read). */
export function* readKeys(kept: KeptRule): Iterable<string> {
  for (let i = 0; i < kept.read.length; i += 2) yield kept.read[i] as string;
}

/**
 * The per-config resources a rule's compile may reach (lifecycle, endpoint resolver), wrapped once
 * per config compile so that any use of them is seen: a use while a rule compiles (compiling())
 * keeps that rule from being kept; a use at any other time — by a compiled step holding them,
 * later — sets the compile's shared Touched, so none of the rules it kept is reused. One wrapper
 * a compile instead of seven closures and a flag a rule (issue 15: the serving thread at 10k routes).
 */
export class RuleWatch {
  readonly deps: { readonly lifecycle: ConfigLifecycle; readonly endpoints: EndpointResolver };
  /** The flag of every rule kept from this compile. */
  readonly touched: Touched;
  #compiling = false;
  #usedWhileCompiling = false;

  constructor(memo: ReuseMemo, lifecycle: ConfigLifecycle, endpoints: EndpointResolver) {
    this.touched = new Touched(memo.touches);
    const used = (): void => {
      if (this.#compiling) this.#usedWhileCompiling = true;
      else this.touched.value = true;
    };
    this.deps = {
      lifecycle: {
        enter: () => {
          used();
          lifecycle.enter();
        },
        leave: () => {
          used();
          lifecycle.leave();
        },
        onRetire: (close) => {
          used();
          lifecycle.onRetire(close);
        },
      },
      endpoints: (endpoint) => {
        used();
        return endpoints(endpoint);
      },
    };
  }

  /** Runs one rule's compile; `used` says whether it reached the wrapped resources meanwhile. */
  compiling<T>(compile: () => T): { readonly result: T; readonly used: boolean } {
    this.#compiling = true;
    this.#usedWhileCompiling = false;
    try {
      const result = compile();
      return { result, used: this.#usedWhileCompiling };
    } finally {
      this.#compiling = false;
    }
  }
}
