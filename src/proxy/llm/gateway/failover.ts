/**
 * Which provider a request's next upstream attempt goes to: the AI backend's own failover and the
 * route's `traffic.retry` combined (docs/llm.md, "Priority groups, failover and retry").
 *
 * - Failover is the backend's: after a provider failed in a way that says nothing about the request
 *   itself (429, 5xx, connect failure, timeout, no credential, an answer over the buffer limit), the
 *   next provider in priority order is tried at once, each provider once per pass. It costs no retry.
 * - Retry is the route's: when failover has nothing left to offer (every provider of the pass
 *   failed, or the failure is a status only the retry policy names, e.g. 408), a failure the policy
 *   retries — a listed status, or a connect failure, as on a Service backend — spends one attempt
 *   of the request's budget (RetryBudget, shared by the whole request across failover), waits the
 *   policy's backoff and re-picks: the next untried provider of the pass, else a fresh pass from the
 *   top priority group (the picker's rotation moves on, so the retry may land on another provider).
 *   In such a later pass every further attempt is a retry: a request makes at most one try per
 *   provider plus the policy's `attempts`.
 *
 * Nothing is retried once the client got a byte: the handler produces a failure for the schedule
 * only before the response head is sent (a stream cut after it becomes an error event).
 */
import type { AiProviderIR } from '../../../ir/ai.ts';
import type { RetryPolicy } from '../../policies/context.ts';
import { RetryBudget } from '../../policies/traffic/retry/attempts.ts';
import type { ProviderPicker } from './picker.ts';
import type { AbortSource } from './upstream.ts';

/** One failed attempt, as the schedule needs to know it. */
export interface AttemptFailure {
  /** The provider's answer status (held back, nothing sent); absent for failures without one. */
  readonly status?: number;
  /** The connection itself failed: nothing reached the provider. */
  readonly connectFailure?: boolean;
  /** The backend's failover moves on after it (429, 5xx, unreachable, timeout, no credential …). */
  readonly failover: boolean;
}

/** The next attempt: its provider and how long to wait before it (the retry policy's backoff). */
export interface NextAttempt {
  readonly provider: AiProviderIR;
  readonly delayMs: number;
  /** True when it spent one of the route's retries (not a free failover step). */
  readonly retry: boolean;
}

/** The backend's failover statuses: the provider is overloaded or failing, not the request wrong. */
export function isFailoverStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

export class ProviderSchedule {
  readonly #picker: ProviderPicker;
  readonly #retry: RetryPolicy | undefined;
  #budget: RetryBudget | undefined;
  #pass: AiProviderIR[];
  #index = 0;
  /** Failover steps are free in the first pass only: a request makes at most one try per provider plus the retries. */
  #firstPass = true;

  constructor(picker: ProviderPicker, retry: RetryPolicy | undefined) {
    this.#picker = picker;
    this.#retry = retry;
    this.#pass = picker.order();
  }

  /** The first provider to try (undefined only for a backend without providers). */
  first(): AiProviderIR | undefined {
    return this.#pass[0];
  }

  /**
   * Whether an answer with `status` must be held back (not sent) because another attempt may
   * follow it: a failover status, or one the route's retry policy retries.
   */
  holdsBack(status: number): boolean {
    return isFailoverStatus(status) || (this.#retry !== undefined && this.#retry.attempts > 0 && this.#retry.codes.has(status));
  }

  /** Whether a failure now would move the request to another provider at once (a free failover step of the first pass). */
  canFailOver(): boolean {
    return this.#firstPass && this.#index + 1 < this.#pass.length;
  }

  /** Where the request goes after `failure`, or undefined when the last failure is the answer. */
  next(failure: AttemptFailure): NextAttempt | undefined {
    const untried = this.#index + 1 < this.#pass.length;
    if (failure.failover && untried && this.#firstPass) return { provider: this.#pass[++this.#index], delayMs: 0, retry: false };
    if (!this.#retry) return undefined;
    // The request body is buffered by the handler, so every attempt can replay it.
    this.#budget ??= new RetryBudget(this.#retry, true);
    const allowed = failure.connectFailure === true ? this.#budget.takeForConnectFailure() : failure.status !== undefined && this.#budget.takeForStatus(failure.status);
    if (!allowed) return undefined;
    if (untried) this.#index++;
    else {
      this.#pass = this.#picker.order();
      this.#index = 0;
      this.#firstPass = false;
    }
    return { provider: this.#pass[this.#index], delayMs: this.#budget.backoffMs, retry: true };
  }
}

/** Waits `ms` (a retry's backoff); resolves early when the client goes away (the caller checks). */
export function backoff(ms: number, abort: AbortSource): Promise<void> {
  if (ms <= 0 || abort.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = abort.onAbort(() => {
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => {
      stop();
      resolve();
    }, ms);
  });
}
