/**
 * Local (per proxy instance) rate limits: one token bucket per policy entry. A bucket holds
 * `requests` (or `tokens`) + `burst` and refills `requests` per unit, continuously. Request limits
 * take one unit at admission; token limits are only known after the response, so admission needs a
 * positive balance and `recordUsage` charges the real count afterwards — the balance may go below
 * zero and then holds back later requests until it refills.
 */
import type { LocalRateLimitPolicy } from '../../../ir/policy.ts';
import { overLimit, ALLOWED, type RateLimitDecision } from './types.ts';

/** One `rateLimit.local` entry of the IR (src/ir/members.ts): exactly one of requests or tokens. */
export type LocalRateLimitEntry = LocalRateLimitPolicy;

const UNIT_MS = { Seconds: 1000, Minutes: 60_000, Hours: 3_600_000 } as const;

class TokenBucket {
  readonly kind: 'requests' | 'tokens';
  readonly #capacity: number;
  readonly #perMs: number;
  #level: number;
  #updatedAt: number;

  constructor(entry: LocalRateLimitEntry, now: number) {
    this.kind = entry.requests !== undefined ? 'requests' : 'tokens';
    const limit = entry.requests ?? entry.tokens ?? 0;
    this.#capacity = limit + (entry.burst ?? 0);
    this.#perMs = limit / UNIT_MS[entry.unit];
    this.#level = this.#capacity;
    this.#updatedAt = now;
  }

  #refill(now: number): void {
    if (now > this.#updatedAt) this.#level = Math.min(this.#capacity, this.#level + (now - this.#updatedAt) * this.#perMs);
    this.#updatedAt = Math.max(this.#updatedAt, now);
  }

  /** Milliseconds until admission is possible (0: now). A request needs one unit; tokens need a positive balance. */
  waitMs(now: number): number {
    this.#refill(now);
    const needed = this.kind === 'requests' ? 1 : Number.MIN_VALUE;
    return this.#level >= needed ? 0 : (needed - this.#level) / this.#perMs;
  }

  take(amount: number, now: number): void {
    this.#refill(now);
    this.#level -= amount;
  }
}

export class LocalRateLimiter {
  readonly #buckets: readonly TokenBucket[];
  readonly #now: () => number;

  constructor(entries: readonly LocalRateLimitEntry[], now: () => number = Date.now) {
    this.#now = now;
    const start = now();
    this.#buckets = entries.map((e) => new TokenBucket(e, start));
  }

  /** True when some entry limits tokens: the pipeline must report usage after the response. */
  get countsTokens(): boolean {
    return this.#buckets.some((b) => b.kind === 'tokens');
  }

  /** Admits a request if every bucket allows it; only then are request buckets charged. */
  admit(): RateLimitDecision {
    const now = this.#now();
    const waitMs = Math.max(0, ...this.#buckets.map((b) => b.waitMs(now)));
    if (waitMs > 0) return overLimit(waitMs / 1000);
    for (const b of this.#buckets) if (b.kind === 'requests') b.take(1, now);
    return ALLOWED;
  }

  /** Charges the input + output tokens of a completed request to every token bucket. */
  recordUsage(tokens: number): void {
    if (!(tokens > 0)) return;
    const now = this.#now();
    for (const b of this.#buckets) if (b.kind === 'tokens') b.take(tokens, now);
  }
}
