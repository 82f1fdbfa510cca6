/**
 * traffic.rateLimit: `local` token buckets (per proxy, LocalRateLimiter) and/or `global` (an Envoy
 * rate-limit service, GlobalRateLimitClient). Over a limit the request is answered 429 with
 * retry-after and the x-ratelimit-* headers; a failing service answers 500 unless FailOpen.
 * Token limits are charged after the response from the usage the LLM handler reports.
 *
 * Local buckets are shared by every request the same policy covers and survive config swaps
 * that leave the policy unchanged: they are kept per (policy source, entries).
 */
import { createActivation } from '../../../../cel/index.ts';
import type { RateLimitPolicy } from '../../../../ir/policy.ts';
import type * as GlobalRateLimit from '../../../ext/ratelimit/global.ts';
import { LocalRateLimiter, type LocalRateLimitEntry } from '../../../ext/ratelimit/local.ts';
import type { RateLimitDecision } from '../../../ext/ratelimit/types.ts';
import { lazyModule } from '../../../../common/lazy-module.ts';
import { activationOf } from '../../cel.ts';
import { conditionalStep, type RunPolicy } from '../../conditional/conditional.ts';
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, respondError, type PolicyResult } from '../../result.ts';
import type { StepCompiler, StepDeps } from '../../step.ts';
import { traceCall } from '../../../telemetry/tracing/request-trace.ts';
import { countPolicyOutcome } from '../../../telemetry/ai-metrics.ts';
import { serviceFailureLog } from '../../service-failure-log.ts';

// The rate-limit service client (gRPC): loaded when a config first names a global limit (lazy-module.ts).
const globalRateLimit = lazyModule<typeof GlobalRateLimit>(import.meta.url, '../../../ext/ratelimit/global.ts');

/** The span of the rate-limit service call on traced requests (telemetry/tracing). */
const RATE_LIMIT_SPAN = { 'switchboard.policy': 'rateLimit' } as const;

/** Bounded: a config churning through policies must not grow this forever. */
const MAX_SHARED_LIMITERS = 4096;
const sharedLimiters = new Map<string, LocalRateLimiter>();

function sharedLimiter(source: string, entries: readonly LocalRateLimitEntry[]): LocalRateLimiter {
  const key = `${source}\n${JSON.stringify(entries)}`;
  let limiter = sharedLimiters.get(key);
  if (!limiter) {
    limiter = new LocalRateLimiter(entries);
    if (sharedLimiters.size >= MAX_SHARED_LIMITERS) sharedLimiters.delete(sharedLimiters.keys().next().value as string);
    sharedLimiters.set(key, limiter);
  }
  return limiter;
}

/** switchboard_policy_outcomes_total: `limited` over a limit, `error` when the service could not decide. */
function denial(policy: 'localRateLimit' | 'globalRateLimit', d: Extract<RateLimitDecision, { allowed: false }>): PolicyResult {
  countPolicyOutcome(policy, d.reason === 'over_limit' ? 'limited' : 'error');
  const headers = Object.fromEntries(d.headers);
  return d.reason === 'over_limit'
    ? respondError(429, 'rate_limited', 'rate limit exceeded', headers)
    : respondError(d.status, 'rate_limit_unavailable', 'the rate limit service is unavailable', headers);
}

function addHeaders(ctx: PolicyContext, d: RateLimitDecision): void {
  if (d.headers.length === 0) return;
  ctx.responseMutations.push((headers) => {
    for (const [name, value] of d.headers) headers[name] = value;
  });
}

function compileOne(config: RateLimitPolicy, source: string, deps: StepDeps, onClose: (close: () => void) => void): RunPolicy {
  if (!config.local && !config.global) throw new Error('rateLimit needs local or global');
  const local = config.local ? sharedLimiter(source, config.local) : undefined;
  const global = config.global ? new (globalRateLimit().GlobalRateLimitClient)(config.global, { resolve: deps.endpoints, connections: deps.connections }) : undefined;
  if (global) onClose(() => global.close());
  const logFailure = global ? serviceFailureLog(deps.logger, 'the rate limit service', config.global?.backendKey ?? config.global?.url, config.global?.failureMode) : undefined;
  const admitLocal = (ctx: PolicyContext): PolicyResult | undefined => {
    if (!local) return undefined;
    const d = local.admit();
    if (!d.allowed) return denial('localRateLimit', d);
    countPolicyOutcome('localRateLimit', 'allowed');
    if (local.countsTokens) ctx.onUsage((u) => local.recordUsage(u.totalTokens));
    return undefined;
  };
  if (!global) return (ctx) => admitLocal(ctx) ?? CONTINUE;
  return async (ctx) => {
    const denied = admitLocal(ctx);
    if (denied) return denied;
    const d = await traceCall('rate_limit', RATE_LIMIT_SPAN, () => global.shouldRateLimit(activationOf(ctx)));
    if (d.cause !== undefined) logFailure?.(d.cause);
    if (!d.allowed) return denial('globalRateLimit', d);
    // A service that failed and FailOpen let the request on is an `error`, not a decision to allow.
    countPolicyOutcome('globalRateLimit', d.failedOpen ? 'error' : 'allowed');
    addHeaders(ctx, d);
    if (global.countsTokens) {
      ctx.onUsage((u) => void global.recordUsage(createActivation({ ...ctx.cel(), llm: { inputTokens: u.inputTokens, outputTokens: u.outputTokens, totalTokens: u.totalTokens } })));
    }
    return CONTINUE;
  };
}

export const compileRateLimit: StepCompiler<'rateLimit'> = (member, deps) => {
  const source = deps.policy.sources.rateLimit?.join(',') ?? 'rateLimit';
  return conditionalStep<RateLimitPolicy>('rateLimit', member, (p, where, onClose) => compileOne(p, `${source}#${where}`, deps, onClose));
};

