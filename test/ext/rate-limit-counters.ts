/**
 * The counting behind the in-process rate-limit service double (rate-limit-service.ts): what an
 * Envoy rate-limit service (envoyproxy/ratelimit) answers to one ShouldRateLimit request, with
 * counters in memory instead of Redis.
 *
 * - One counter per (domain, descriptor entries in order).
 * - Every descriptor of a request is charged its hits_addend; 0 counts as 1, as the real service does.
 * - The limit is the descriptor's `limit` override when it has one, else the service's rule for it;
 *   a descriptor with neither is OK, not counted, and has no current_limit.
 * - Fixed windows of one unit. A window opens at its counter's first hit (as Redis
 *   `INCRBY` + `EXPIRE NX` would), not at a clock boundary as envoyproxy/ratelimit aligns them, so
 *   a test never straddles a boundary by chance.
 * - A descriptor is OVER_LIMIT once its count passes the limit (over-limit hits still count); the
 *   overall code is OVER_LIMIT when any descriptor is. limit_remaining and duration_until_reset
 *   describe the open window.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { RateLimitDescriptor_Entry } from '../../src/proxy/ext/gen/envoy/extensions/common/ratelimit/v3/ratelimit_pb.js';
import {
  RateLimitResponse_Code, RateLimitResponseSchema,
  type RateLimitRequest, type RateLimitResponse, type RateLimitResponse_DescriptorStatusSchema, type RateLimitResponse_RateLimit_Unit,
} from '../../src/proxy/ext/gen/envoy/service/ratelimit/v3/rls_pb.js';
import { RateLimitUnit } from '../../src/proxy/ext/gen/envoy/type/v3/ratelimit_unit_pb.js';
import type { MessageInitShape } from '@bufbuild/protobuf';

/** A limit the service is configured with: `requestsPerUnit` hits per window of one `unit`. */
export interface RateLimitRule {
  readonly requestsPerUnit: number;
  readonly unit: RateLimitUnit;
}

/** The service's configuration: the rule for a descriptor that carries no `limit` override, if any. */
export type RuleLookup = (domain: string, entries: readonly RateLimitDescriptor_Entry[]) => RateLimitRule | undefined;

/** Window lengths; a month and a year are fixed lengths here (30 and 365 days). */
const UNIT_MS: Partial<Record<RateLimitUnit, number>> = {
  [RateLimitUnit.SECOND]: 1000,
  [RateLimitUnit.MINUTE]: 60_000,
  [RateLimitUnit.HOUR]: 3_600_000,
  [RateLimitUnit.DAY]: 86_400_000,
  [RateLimitUnit.MONTH]: 30 * 86_400_000,
  [RateLimitUnit.YEAR]: 365 * 86_400_000,
};

interface Window {
  count: number;
  readonly endsAt: number;
}

/** Hit counts in fixed windows that open at a key's first hit. */
export class FixedWindowCounters {
  readonly #windows = new Map<string, Window>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Adds `hits` to the key's open window (opening one of `windowMs` if none is); the new count and ms until it closes. */
  hit(key: string, hits: number, windowMs: number): { readonly count: number; readonly resetMs: number } {
    const now = this.#now();
    let window = this.#open(key, now);
    if (!window) {
      window = { count: 0, endsAt: now + windowMs };
      this.#windows.set(key, window);
    }
    window.count += hits;
    return { count: window.count, resetMs: window.endsAt - now };
  }

  /** Hits in the key's open window; 0 when none is open. */
  count(key: string): number {
    return this.#open(key, this.#now())?.count ?? 0;
  }

  #open(key: string, now: number): Window | undefined {
    const window = this.#windows.get(key);
    if (window && now >= window.endsAt) this.#windows.delete(key);
    return window && now < window.endsAt ? window : undefined;
  }
}

/** The counter key of a descriptor: its domain and its entries, in order. */
export function counterKey(domain: string, entries: readonly (readonly [string, string])[]): string {
  return JSON.stringify([domain, entries]);
}

type DescriptorStatusInit = MessageInitShape<typeof RateLimitResponse_DescriptorStatusSchema>;

/** Charges a request's descriptors and answers as the service would. */
export function shouldRateLimit(req: RateLimitRequest, rules: RuleLookup, counters: FixedWindowCounters): RateLimitResponse {
  const hits = req.hitsAddend || 1;
  const statuses = req.descriptors.map((d): DescriptorStatusInit => {
    const rule: RateLimitRule | undefined = d.limit ? { requestsPerUnit: d.limit.requestsPerUnit, unit: d.limit.unit } : rules(req.domain, d.entries);
    if (!rule) return { code: RateLimitResponse_Code.OK };
    const windowMs = UNIT_MS[rule.unit];
    if (windowMs === undefined) throw new ConnectError(`descriptor limit has no known unit (${rule.unit})`, Code.InvalidArgument);
    const { count, resetMs } = counters.hit(counterKey(req.domain, d.entries.map((e) => [e.key, e.value])), hits, windowMs);
    return {
      code: count > rule.requestsPerUnit ? RateLimitResponse_Code.OVER_LIMIT : RateLimitResponse_Code.OK,
      // envoy.type.v3.RateLimitUnit and RateLimitResponse.RateLimit.Unit share their numbers.
      currentLimit: { requestsPerUnit: rule.requestsPerUnit, unit: rule.unit as number as RateLimitResponse_RateLimit_Unit },
      limitRemaining: Math.max(0, rule.requestsPerUnit - count),
      durationUntilReset: { seconds: BigInt(Math.floor(resetMs / 1000)), nanos: (resetMs % 1000) * 1_000_000 },
    };
  });
  const over = statuses.some((s) => s.code === RateLimitResponse_Code.OVER_LIMIT);
  return create(RateLimitResponseSchema, { overallCode: over ? RateLimitResponse_Code.OVER_LIMIT : RateLimitResponse_Code.OK, statuses });
}
