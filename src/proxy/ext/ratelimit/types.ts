/** Shapes shared by the local and global rate limiters. */
import type { HeaderPair } from '../headers.ts';

export type RateLimitDecision =
  | {
      readonly allowed: true;
      readonly headers: readonly HeaderPair[];
      /** Set when the service failed and FailOpen let the request through, with why (for the log). */
      readonly failedOpen?: true;
      readonly cause?: string;
    }
  | {
      readonly allowed: false;
      /** 429 when over a limit; 500 when the rate-limit service failed and FailClosed applies. */
      readonly status: number;
      /** Seconds until the limit resets (also in the retry-after header); 0 for service failures. */
      readonly retryAfterS: number;
      readonly headers: readonly HeaderPair[];
      readonly reason: 'over_limit' | 'unavailable';
      /** With `unavailable`: why the service could not decide (for the log, never the response). */
      readonly cause?: string;
    };

export const ALLOWED: RateLimitDecision = Object.freeze({ allowed: true, headers: [] });

export function overLimit(retryAfterS: number, headers: readonly HeaderPair[] = []): RateLimitDecision {
  const seconds = Math.max(1, Math.ceil(retryAfterS));
  return { allowed: false, status: 429, retryAfterS: seconds, headers: [['retry-after', String(seconds)], ...headers], reason: 'over_limit' };
}
