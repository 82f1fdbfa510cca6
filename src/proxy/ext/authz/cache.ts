/**
 * Result cache in front of an external-authorization client. Keys are CEL expressions that must
 * capture everything the service decides on; the TTL is a Duration string or CEL (a duration or a
 * timestamp) evaluated after the decision, so it may read `extauthz`. If any key expression fails
 * or yields something other than a scalar, the request goes to the service and the cache is
 * neither read nor written (SPEC.md Errors). Only the service's own answers are cached, never a
 * failure of the service.
 */
import { createActivation, evalValue } from '../../../cel/index.ts';
import type { Activation, Program } from '../../../cel/index.ts';
import { compileExpression } from '../expressions.ts';
import type { AuthzDecision, DownstreamRequest, ExtAuthzClient } from './types.ts';

export const DEFAULT_MAX_ENTRIES = 10_000;
const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

export interface AuthzCacheConfig {
  readonly key: readonly string[];
  readonly ttl: string;
  readonly maxEntries?: number;
}

type Ttl = { readonly fixedMs: number } | { readonly program: Program };

export function parseDurationMs(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/([0-9]{1,5})(ms|h|m|s)/g)) total += Number(m[1]) * UNIT_MS[m[2]];
  return total;
}

export class CachedExtAuthzClient implements ExtAuthzClient {
  readonly bodyLimit?: number;
  readonly #inner: ExtAuthzClient;
  readonly #keys: readonly Program[];
  readonly #ttl: Ttl;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Insertion order is recency order: a hit is re-inserted, the first entry is the least recent. */
  readonly #entries = new Map<string, { decision: AuthzDecision; expiresAt: number }>();

  constructor(inner: ExtAuthzClient, config: AuthzCacheConfig, now: () => number = Date.now) {
    this.#inner = inner;
    if (inner.bodyLimit !== undefined) this.bodyLimit = inner.bodyLimit;
    this.#keys = config.key.map((k, i) => compileExpression(k, `extAuth.cache.key[${i}]`));
    const fixedMs = parseDurationMs(config.ttl);
    this.#ttl = fixedMs !== undefined ? { fixedMs } : { program: compileExpression(config.ttl, 'extAuth.cache.ttl') };
    this.#maxEntries = Math.max(1, config.maxEntries ?? DEFAULT_MAX_ENTRIES);
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  async check(request: DownstreamRequest, activation: Activation, signal?: AbortSignal): Promise<AuthzDecision> {
    const key = this.#key(activation);
    if (key === undefined) return this.#inner.check(request, activation, signal);
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      if (hit.expiresAt > this.#now()) {
        this.#entries.set(key, hit);
        return hit.decision;
      }
    }
    const decision = await this.#inner.check(request, activation, signal);
    const cacheable = decision.allowed ? decision.failedOpen !== true : decision.reason === 'denied';
    if (!cacheable) return decision;
    const expiresAt = this.#expiry(decision, activation);
    if (expiresAt !== undefined && expiresAt > this.#now()) {
      this.#entries.set(key, { decision, expiresAt });
      while (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return decision;
  }

  #key(activation: Activation): string | undefined {
    const parts: unknown[] = [];
    for (const program of this.#keys) {
      const result = evalValue(program, activation);
      if (!result.ok) return undefined;
      const v = result.value;
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return undefined;
      parts.push(v);
    }
    return JSON.stringify(parts);
  }

  /** The TTL is evaluated after the decision is known: `extauthz` holds its metadata. */
  #expiry(decision: AuthzDecision, activation: Activation): number | undefined {
    const now = this.#now();
    if ('fixedMs' in this.#ttl) return now + this.#ttl.fixedMs;
    const metadata = decision.allowed ? decision.metadata : {};
    const withDecision = { ...activation, extauthz: createActivation({ extauthz: metadata }).extauthz } as Activation;
    const result = this.#ttl.program.evaluate(withDecision);
    if (!result.ok) return undefined;
    const v: unknown = result.value;
    if (v instanceof Date) return v.getTime();
    if (typeof v === 'string') {
      const ms = parseDurationMs(v);
      return ms === undefined ? undefined : now + ms;
    }
    if (v !== null && typeof v === 'object' && 'seconds' in v && 'nanos' in v) {
      const d = v as { seconds: bigint; nanos: number };
      return now + Number(d.seconds) * 1000 + d.nanos / 1e6;
    }
    return undefined;
  }

  close(): void {
    this.#inner.close();
  }
}
