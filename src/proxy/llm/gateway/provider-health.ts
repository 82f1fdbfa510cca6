/**
 * Health of an AI backend's providers (docs/llm.md, "Provider health"): the same passive health a
 * Service endpoint or an MCP target has (policies/backend/health.ts: success EWMA score, eviction
 * per the provider's `health` policy, restore on return), plus what choosing between providers
 * needs — the answer latency (EWMA), the attempts in flight and a ranking cost for the picker's
 * power-of-two-choices.
 *
 * Every provider is tracked, with or without a `health` policy: without one the score and latency
 * still rank it, and only a 429 with Retry-After evicts it. State lives in a ProviderHealthBoard
 * that outlives handlers (a changed backend's new handler keeps its providers' state) and is what
 * the admin API and the metrics read.
 */
import { compile, type Program } from '../../../cel/index.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { freshHealth, FULL_HEALTH, healthOutcome, PassiveHealth, type EndpointHealth } from '../../policies/backend/health.ts';

type HealthSpec = NonNullable<BackendPolicy['health']>;

/**
 * A Retry-After longer than this evicts for this long only: the header is the provider's (or a
 * man-in-the-middle's) word, and one bad answer must not take a provider out for hours
 * (docs/security.md).
 */
export const MAX_RETRY_AFTER_MS = 300_000;
/**
 * After this long without an outcome, a provider's ranking forgets half of its lost score and
 * of its measured latency, so a provider that failed or was slow gets tried again now and then
 * (with two providers, power-of-two-choices alone would never pick the worse one again, and what
 * was measured of it could never change).
 */
const RANK_RECOVERY_HALF_LIFE_MS = 2_000;
/** Added to every latency, so a provider with no or tiny latency measured does not win by a ratio of near-zeros. */
const LATENCY_FLOOR_MS = 5;
/** How much a lost score point costs against latency: at score 50 the cost is 11× that of a healthy provider of the same latency. */
const FAILURE_PENALTY = 20;
/** Ranking-only state: attempts in flight. */
interface Load {
  /** Start times of the attempts in flight (unordered; as many as there are attempts waiting). */
  readonly starts: number[];
  /** When the last outcome was recorded (0: never), for the ranking's recovery. */
  lastOutcomeAt: number;
  /** Attempts waiting for this provider's first byte that another provider could take over (waitHead). */
  readonly waiting: Set<HeadWait>;
  /** When an attempt's timeout last got the provider evicted (0: never): waits begun before it are that stall's. */
  stallEvictedAt: number;
}

/**
 * An attempt waiting for its provider's answer head, nothing sent to the client yet, with
 * somewhere else to go: when another attempt's timeout gets the provider evicted, `interrupt`
 * ends this wait at once (with a ProviderStalledError) instead of letting it run into its own
 * timeout — a stalling provider costs one timeout per eviction, not one per attempt in flight.
 */
export interface HeadWait {
  interrupt: ((err: ProviderStalledError) => void) | undefined;
}

/** The attempt's provider was evicted after another attempt timed out on it: failed over, not a failure of its own. */
export class ProviderStalledError extends Error {
  readonly code = 'SWITCHBOARD_PROVIDER_STALLED';
  constructor(provider: string) {
    super(`provider ${provider} was evicted after an attempt timed out on it; the request moved on before its own timeout`);
  }
}

/** One provider's state as the admin API and the metrics show it. */
export interface ProviderHealthView {
  readonly provider: string;
  readonly score: number;
  readonly latencyMs: number;
  readonly inflight: number;
  readonly consecutiveFailures: number;
  readonly timesEvicted: number;
  /** Epoch ms the eviction ends; null when not evicted. */
  readonly evictedUntil: number | null;
}

/** No `health` policy on a provider: the score and latency move, only a Retry-After evicts. */
const NO_POLICY: HealthSpec = {};
/** unhealthyCondition programs by spec object (the IR is immutable; an invalid one never reaches a request, the backend policy layer refuses it first). */
const conditions = new WeakMap<HealthSpec, Program | null>();

function conditionOf(spec: HealthSpec): Program | undefined {
  if (spec.unhealthyCondition === undefined) return undefined;
  let program = conditions.get(spec);
  if (program === undefined) {
    const compiled = compile(spec.unhealthyCondition, { expect: ['bool'] });
    conditions.set(spec, (program = compiled.ok ? compiled.program : null));
  }
  return program ?? undefined;
}

export class ProviderHealth {
  readonly backend: string;
  readonly names: readonly string[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #states: readonly EndpointHealth[];
  readonly #load: Load[];
  readonly #now: () => number;
  /** One PassiveHealth per `health` spec in use, all over the same states (as MCP targets share theirs). */
  readonly #bySpec = new WeakMap<HealthSpec, PassiveHealth>();
  readonly #plain: PassiveHealth;

  constructor(backend: string, names: readonly string[], states?: readonly EndpointHealth[], now: () => number = Date.now) {
    this.backend = backend;
    this.names = names;
    this.#index = new Map(names.map((n, i) => [n, i]));
    this.#states = states ?? names.map(freshHealth);
    this.#load = names.map(() => ({ starts: [], lastOutcomeAt: 0, waiting: new Set<HeadWait>(), stallEvictedAt: 0 }));
    this.#now = now;
    this.#plain = new PassiveHealth(NO_POLICY, this.#states, now);
  }

  /** This health's clock (tests give it a fake one). */
  now(): number {
    return this.#now();
  }

  indexOf(name: string): number {
    return this.#index.get(name) ?? -1;
  }

  /** An attempt to provider `i` starts; returns its start time for `answered`/`failed`. */
  begin(i: number): number {
    const now = this.#now();
    const load = this.#load[i];
    load?.starts.push(now);
    return now;
  }

  /**
   * The provider answered `status` (its head for a stream). A 429 counts as a failure here (it
   * says nothing about the request, the provider is overloaded) and, with Retry-After, evicts for
   * that long (capped at MAX_RETRY_AFTER_MS).
   */
  answered(i: number, started: number, status: number, headers: Readonly<Record<string, string | string[] | undefined>>, spec: HealthSpec | undefined): void {
    const now = this.#end(i, started);
    const policy = spec ?? NO_POLICY;
    let outcome = healthOutcome(conditionOf(policy), status, this.backend);
    if (outcome === 'success' && status === 429) outcome = 'failure';
    this.#health(policy).record(i, outcome, now - started);
    if (status === 429) {
      const ms = retryAfterMs(headers, now);
      if (ms !== undefined) this.#plain.evictFor(i, Math.min(ms, MAX_RETRY_AFTER_MS));
    }
  }

  /**
   * No answer: refused or timed out (recorded as the 502/504 the client would see, as Service
   * endpoints record connect failures). A timeout (504) that gets the provider evicted ends the
   * other attempts waiting for its head at once (waitHead): they would each wait out a timeout too.
   * A timeout of an attempt that was already waiting when another one's timeout evicted the
   * provider is that same stall (undici's headers timer fires on a ~0.5 s tick, so waits begun
   * within a few ms of each other expire together, before they can be failed over): it ends the
   * attempt without counting as another failure — one stall, one timeout per eviction.
   */
  failed(i: number, started: number, status: number, spec: HealthSpec | undefined): void {
    const load = this.#load[i];
    if (status === 504 && load !== undefined && started < load.stallEvictedAt && this.#plain.evicted(i)) {
      this.abandon(i, started);
      return;
    }
    const now = this.#end(i, started);
    const policy = spec ?? NO_POLICY;
    this.#health(policy).record(i, healthOutcome(conditionOf(policy), status, this.backend) === 'unhealthy' ? 'unhealthy' : 'failure', now - started);
    if (status === 504 && load !== undefined && this.#plain.evicted(i)) {
      load.stallEvictedAt = now;
      this.#interruptWaits(i);
    }
  }

  /**
   * `wait` waits for provider `i`'s head and could be failed over: a stall eviction ends it
   * (HeadWait). The caller ends the wait with headDone once the head came or the attempt ended.
   */
  waitHead(i: number, wait: HeadWait): void {
    this.#load[i]?.waiting.add(wait);
  }

  headDone(i: number, wait: HeadWait): void {
    this.#load[i]?.waiting.delete(wait);
  }

  /** The attempt ended without saying anything about the provider (the client left, the answer was over the buffer limit). */
  abandon(i: number, started: number): void {
    const load = this.#load[i];
    if (load) release(load, started);
  }

  /** A stream the provider cut after its head: a failure (no latency: the head's was recorded). */
  cut(i: number, spec: HealthSpec | undefined): void {
    const load = this.#load[i];
    if (load) load.lastOutcomeAt = this.#now();
    this.#health(spec ?? NO_POLICY).record(i, 'failure');
  }

  /** Not evicted now (an eviction that ran out ends on this check). */
  available(i: number): boolean {
    return !this.#plain.evicted(i);
  }

  /**
   * What sending the next request to provider `i` is expected to cost (lower is better): its
   * latency — the EWMA, or the age of its oldest attempt in flight when that is longer (a provider
   * that stalls ranks worse while it stalls, before any timeout) — times the attempts in flight
   * plus this one, times a penalty for lost score. The measured latency and lost score fade while
   * no outcome arrives (half-life RANK_RECOVERY_HALF_LIFE_MS), so a provider that failed or was
   * slow is tried again later.
   */
  cost(i: number, now: number): number {
    const state = this.#states[i];
    const load = this.#load[i];
    const inflight = load.starts.length;
    let oldest = now;
    for (const started of load.starts) if (started < oldest) oldest = started;
    const age = now - oldest;
    const idle = load.lastOutcomeAt === 0 ? 0 : Math.max(0, now - load.lastOutcomeAt);
    // What was measured counts less the longer nothing new was heard: the provider gets probed again.
    const fresh = idle === 0 ? 1 : 2 ** (-idle / RANK_RECOVERY_HALF_LIFE_MS);
    const latency = Math.max(state.latencyMs * fresh, age) + LATENCY_FLOOR_MS;
    const lost = (FULL_HEALTH - state.score) * fresh;
    return latency * (inflight + 1) * (1 + (FAILURE_PENALTY * lost) / FULL_HEALTH);
  }

  /** When provider `i`'s eviction ends (0: not evicted). */
  evictedUntil(i: number): number {
    return this.#states[i]?.evictedUntil ?? 0;
  }

  views(): ProviderHealthView[] {
    const now = this.#now();
    return this.names.map((provider, i) => {
      const s = this.#states[i];
      const evicted = !this.#plain.evicted(i) ? null : s.evictedUntil;
      return {
        provider, score: round(s.score), latencyMs: round(s.latencyMs), inflight: this.#load[i].starts.length,
        consecutiveFailures: s.consecutiveFailures, timesEvicted: s.timesEvicted, evictedUntil: evicted !== null && evicted > now ? evicted : null,
      };
    });
  }

  #end(i: number, started: number): number {
    const now = this.#now();
    const load = this.#load[i];
    if (load) {
      release(load, started);
      load.lastOutcomeAt = now;
    }
    return now;
  }

  #interruptWaits(i: number): void {
    const waiting = this.#load[i]?.waiting;
    if (!waiting || waiting.size === 0) return;
    const err = new ProviderStalledError(this.names[i]);
    const waits = [...waiting];
    waiting.clear();
    for (const wait of waits) wait.interrupt?.(err);
  }

  #health(spec: HealthSpec): PassiveHealth {
    if (spec === NO_POLICY) return this.#plain;
    let health = this.#bySpec.get(spec);
    if (!health) this.#bySpec.set(spec, (health = new PassiveHealth(spec, this.#states, this.#now)));
    return health;
  }
}

/** One attempt in flight is over: its start time leaves the list (swap-remove: the order does not matter). */
function release(load: Load, started: number): void {
  const k = load.starts.indexOf(started);
  if (k < 0) return;
  load.starts[k] = load.starts[load.starts.length - 1];
  load.starts.pop();
}

/**
 * How long a 429 asks to wait: `retry-after-ms` (OpenAI's), else `retry-after` as seconds or an
 * HTTP date; undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Readonly<Record<string, string | string[] | undefined>>, now: number): number | undefined {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = first(headers['retry-after'])?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/**
 * Every AI backend's provider health in this process, by backend key and provider name: kept
 * while a handler uses it (a changed backend's new handler takes over the state of the providers
 * it keeps), read by the admin API and the metrics.
 */
export class ProviderHealthBoard {
  readonly #states = new Map<string, { readonly state: EndpointHealth; refs: number }>();
  readonly #live = new Set<ProviderHealth>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The health of `providers` of `backend`, sharing state with any handler already tracking them. */
  attach(backend: string, providers: readonly string[]): ProviderHealth {
    const states = providers.map((name) => {
      const key = JSON.stringify([backend, name]);
      let entry = this.#states.get(key);
      if (!entry) this.#states.set(key, (entry = { state: freshHealth(), refs: 0 }));
      entry.refs++;
      return entry.state;
    });
    const health = new ProviderHealth(backend, providers, states, this.#now);
    this.#live.add(health);
    return health;
  }

  /** The handler closed: its providers' state goes when no other handler holds it. */
  detach(health: ProviderHealth): void {
    if (!this.#live.delete(health)) return;
    for (const name of health.names) {
      const key = JSON.stringify([health.backend, name]);
      const entry = this.#states.get(key);
      if (entry && --entry.refs <= 0) this.#states.delete(key);
    }
  }

  /** Per backend, its providers' state (a backend served by two handlers during a swap shows once, the newest). */
  snapshot(): { backend: string; providers: ProviderHealthView[] }[] {
    const byBackend = new Map<string, ProviderHealth>();
    for (const h of this.#live) byBackend.set(h.backend, h);
    return [...byBackend.values()].map((h) => ({ backend: h.backend, providers: h.views() }));
  }
}
