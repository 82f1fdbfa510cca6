/**
 * traffic.retry (Gateway API HTTPRouteRetry): `codes` (statuses 400..599 that are retried),
 * `attempts` (retries after the first try, default 1) and `backoff` (a Duration waited between
 * tries). Connect failures are always retried. The step only hands the compiled policy to the
 * Exchange, which retries a request only while its body can be replayed (no body, or buffered).
 */
import { parseDurationMs } from '../../../ext/authz/cache.ts';
import type { Json, RetryPolicySpec } from '../../../../ir/policy.ts';
import type { RetryPolicy } from '../../context.ts';
import { CONTINUE } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

const DEFAULT_ATTEMPTS = 1;
/** A bound so a typo cannot turn one request into thousands. */
const MAX_ATTEMPTS = 16;

/** Parses the member as written (the API keeps `retry` as an unchecked JSON object): a malformed field throws, failing closed. */
export function compileRetryPolicy(spec: RetryPolicySpec): RetryPolicy {
  const codes = spec.codes ?? [];
  const isStatus = (c: Json): c is number => typeof c === 'number' && Number.isInteger(c) && c >= 400 && c <= 599;
  if (!Array.isArray(codes) || !codes.every(isStatus)) throw new Error('retry.codes must be a list of HTTP statuses 400..599');
  const attempts = spec.attempts ?? DEFAULT_ATTEMPTS;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 0 || attempts > MAX_ATTEMPTS) throw new Error(`retry.attempts must be an integer 0..${MAX_ATTEMPTS}`);
  let backoffMs = 0;
  if (spec.backoff !== undefined) {
    const parsed = typeof spec.backoff === 'string' ? parseDurationMs(spec.backoff) : undefined;
    if (parsed === undefined) throw new Error(`retry.backoff must be a Duration such as 100ms, not ${JSON.stringify(spec.backoff)}`);
    backoffMs = parsed;
  } else if (typeof spec.backoffMs === 'number') {
    backoffMs = spec.backoffMs;
  }
  return { codes: new Set(codes), attempts, backoffMs };
}

export const compileRetry: StepCompiler<'retry'> = (member) => {
  const policy = compileRetryPolicy(member);
  return {
    member: 'retry',
    onRequest(ctx) {
      ctx.upstream.retry = policy;
      return CONTINUE;
    },
  };
};
