/**
 * An in-process Envoy rate-limit service for the global rate-limit tests: the real
 * `envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit` gRPC API (connect-node over h2c,
 * on 127.0.0.1) counting in memory (rate-limit-counters.ts says how), so `npm test` needs no
 * Redis.
 */
import { RateLimitService, type RateLimitRequest } from '../../src/proxy/ext/gen/envoy/service/ratelimit/v3/rls_pb.js';
import { counterKey, FixedWindowCounters, shouldRateLimit, type RuleLookup } from './rate-limit-counters.ts';
import { startGrpcServer, type RunningGrpcServer } from './servers.ts';

export type { RateLimitRule, RuleLookup } from './rate-limit-counters.ts';

export interface RateLimitServiceOptions {
  /** The configured limit of a descriptor without a `limit` override; undefined leaves it unlimited. */
  readonly rules: RuleLookup;
  /** The clock windows are measured by (ms); Date.now unless a test drives time itself. */
  readonly now?: () => number;
}

export interface RunningRateLimitService extends RunningGrpcServer {
  /** Every ShouldRateLimit request received, in order. */
  readonly requests: readonly RateLimitRequest[];
  /** Hits counted for a descriptor in its open window; 0 when none is open. */
  count(domain: string, entries: readonly (readonly [string, string])[]): number;
}

export async function startRateLimitService(options: RateLimitServiceOptions): Promise<RunningRateLimitService> {
  const counters = new FixedWindowCounters(options.now);
  const requests: RateLimitRequest[] = [];
  const server = await startGrpcServer((router) => router.service(RateLimitService, {
    shouldRateLimit(req) {
      requests.push(req);
      return shouldRateLimit(req, options.rules, counters);
    },
  }));
  return Object.assign(server, {
    requests,
    count: (domain: string, entries: readonly (readonly [string, string])[]) => counters.count(counterKey(domain, entries)),
  });
}
