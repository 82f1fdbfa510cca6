import { createActivation, evalBool, type Program } from '../../../cel/index.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';

type HealthSpec = NonNullable<BackendPolicy['health']>;

/** SPEC.md: eviction lasts 3 s by default, times the number of evictions so far. */
const DEFAULT_EVICTION_MS = 3_000;
/** Weight of the newest outcome in the EWMA score (0..100). */
const EWMA_WEIGHT = 0.3;
export const FULL_HEALTH = 100;

/** One endpoint's passive health; shared by the configs that use it (see HealthStates). */
export interface EndpointHealth {
  score: number;
  consecutiveFailures: number;
  timesEvicted: number;
  evictedUntil: number;
  /** Score restored when the eviction ends (restoreHealth, else the pre-eviction score). */
  scoreOnReturn: number;
  /** EWMA of the answer latency in ms (0: none measured yet); fed only by callers that time their calls (AI providers). */
  latencyMs: number;
}

/**
 * Passive health of a backend's endpoints, fed by every response. An outcome is `unhealthy`
 * (the unhealthyCondition held), `failure` (a 5xx or connection failure when no condition is
 * configured: it lowers the score but never evicts on its own) or `success`.
 *
 * Eviction (only with `eviction` set): `consecutiveFailures` reached, or the score below
 * `healthThreshold`; with neither, one unhealthy outcome evicts. An evicted endpoint returns
 * after duration × times evicted; when every endpoint is evicted, picking uses them all.
 */
export class PassiveHealth {
  readonly #spec: HealthSpec;
  readonly #endpoints: EndpointHealth[];
  readonly #now: () => number;
  #cursor = 0;

  /** `endpoints`: a count (fresh state) or each endpoint's state, from HealthStates so it outlives a config swap. */
  constructor(spec: HealthSpec, endpoints: number | readonly EndpointHealth[], now: () => number = Date.now) {
    this.#spec = spec;
    this.#now = now;
    this.#endpoints = typeof endpoints === 'number' ? Array.from({ length: endpoints }, freshHealth) : [...endpoints];
  }

  /** Round-robin over endpoints not evicted; all of them when every one is evicted. */
  pick(): number | undefined {
    const n = this.#endpoints.length;
    if (n === 0) return undefined;
    const now = this.#now();
    for (let step = 0; step < n; step++) {
      const i = (this.#cursor + step) % n;
      if (this.#available(i, now)) {
        this.#cursor = (i + 1) % n;
        return i;
      }
    }
    const i = this.#cursor;
    this.#cursor = (i + 1) % n;
    return i;
  }

  /** One outcome; `latencyMs` (how long the answer took) feeds the latency EWMA when the caller measured it. */
  record(index: number, outcome: 'success' | 'failure' | 'unhealthy', latencyMs?: number): void {
    const e = this.#endpoints[index];
    if (!e) return;
    const bad = outcome !== 'success';
    e.score = e.score * (1 - EWMA_WEIGHT) + (bad ? 0 : FULL_HEALTH) * EWMA_WEIGHT;
    if (latencyMs !== undefined) e.latencyMs = e.latencyMs === 0 ? latencyMs : e.latencyMs * (1 - EWMA_WEIGHT) + latencyMs * EWMA_WEIGHT;
    e.consecutiveFailures = bad ? e.consecutiveFailures + 1 : 0;
    const eviction = this.#spec.eviction;
    if (!bad || !eviction || e.evictedUntil > this.#now()) return;
    const byCount = eviction.consecutiveFailures !== undefined && eviction.consecutiveFailures > 0 && e.consecutiveFailures >= eviction.consecutiveFailures;
    const byScore = eviction.healthThreshold !== undefined && e.score < eviction.healthThreshold;
    const noThreshold = eviction.consecutiveFailures === undefined && eviction.healthThreshold === undefined;
    if (byCount || byScore || (noThreshold && outcome === 'unhealthy')) this.#evict(e, eviction);
  }

  /**
   * Evicts for `ms` whatever the policy says (the upstream asked for it: a 429 with Retry-After).
   * It counts as an eviction (times evicted grows, so a later policy eviction backs off longer);
   * an eviction already running is only ever lengthened.
   */
  evictFor(index: number, ms: number): void {
    const e = this.#endpoints[index];
    if (!e || ms <= 0) return;
    const now = this.#now();
    // An eviction that ran out unnoticed (nothing picked since) ends first: this is a new one.
    this.#available(index, now);
    const until = now + ms;
    if (until <= e.evictedUntil) return;
    if (e.evictedUntil === 0) {
      e.timesEvicted += 1;
      e.scoreOnReturn = this.#spec.eviction?.restoreHealth ?? e.score;
    }
    e.evictedUntil = until;
  }

  /** Whether an endpoint is evicted now (an eviction that ran out ends here: its score is restored). */
  evicted(index: number): boolean {
    return !this.#available(index, this.#now());
  }

  /** The endpoint's state, read-only (admin views, the AI provider picker's ranking). */
  state(index: number): Readonly<EndpointHealth> | undefined {
    return this.#endpoints[index];
  }

  #available(index: number, now: number): boolean {
    const e = this.#endpoints[index];
    if (e.evictedUntil === 0) return true;
    if (e.evictedUntil > now) return false;
    e.evictedUntil = 0;
    e.score = e.scoreOnReturn;
    e.consecutiveFailures = 0;
    return true;
  }

  #evict(e: EndpointHealth, eviction: NonNullable<HealthSpec['eviction']>): void {
    e.timesEvicted += 1;
    e.scoreOnReturn = eviction.restoreHealth ?? e.score;
    e.evictedUntil = this.#now() + (eviction.durationMs ?? DEFAULT_EVICTION_MS) * e.timesEvicted;
  }
}

/**
 * What one response means for passive health: `unhealthy` when the unhealthyCondition holds on
 * it, else `failure` for a 5xx (connect failures are recorded as 5xx), else `success`. Shared by
 * Service endpoints and MCP targets.
 */
export function healthOutcome(unhealthy: Program | undefined, status: number, backendName: string): 'success' | 'failure' | 'unhealthy' {
  if (unhealthy && evalBool(unhealthy, createActivation({ response: { code: status }, backend: { name: backendName } })) === true) return 'unhealthy';
  return status >= 500 ? 'failure' : 'success';
}

export function freshHealth(): EndpointHealth {
  return { score: FULL_HEALTH, consecutiveFailures: 0, timesEvicted: 0, evictedUntil: 0, scoreOnReturn: FULL_HEALTH, latencyMs: 0 };
}

/**
 * Passive health state that survives config swaps. Each compile asks for the state of every
 * endpoint its health policies cover, under a key naming the backend, the policy objects the
 * `health` member came from and the endpoint's address; the same key in the next config gets
 * the same state (score, failure run, evictions). After the swap, `retainUsed()` forgets the
 * endpoints the new config no longer covers, so one that returns later starts healthy.
 */
export class HealthStates {
  readonly #states = new Map<string, EndpointHealth>();
  #used = new Set<string>();

  static key(backendKey: string, sources: readonly string[] | undefined, host: string, port: number): string {
    return JSON.stringify([backendKey, sources ?? [], host, port]);
  }

  get(key: string): EndpointHealth {
    let state = this.#states.get(key);
    if (!state) this.#states.set(key, (state = freshHealth()));
    this.#used.add(key);
    return state;
  }

  /** Drops the states no compile asked for since the last call. */
  retainUsed(): void {
    for (const key of this.#states.keys()) if (!this.#used.has(key)) this.#states.delete(key);
    this.#used = new Set();
  }

  get size(): number {
    return this.#states.size;
  }
}
