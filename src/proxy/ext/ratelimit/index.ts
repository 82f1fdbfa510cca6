/**
 * Rate limits: `LocalRateLimiter` (token buckets per proxy) and `GlobalRateLimitClient` (Envoy
 * rate-limit service). Build one of each per policy when config is compiled.
 *
 *   const d = local.admit()                         // and/or await global.shouldRateLimit(activation)
 *   if (!d.allowed) answer d.status with d.headers (retry-after …); else add d.headers to the response
 *   after completion: local.recordUsage(total tokens); await global.recordUsage(activation with llm usage)
 */
export { GlobalRateLimitClient } from './global.ts';
export type { GlobalRateLimitConfig, GlobalRateLimitOptions } from './global.ts';
export { LocalRateLimiter } from './local.ts';
export type { LocalRateLimitEntry } from './local.ts';
export type { RateLimitDecision } from './types.ts';
