/**
 * The retry budget of one upstream exchange. A request is retried only while its body can be
 * replayed: no body, or a body a policy already buffered. A streamed body is gone once sent.
 */
import type { RetryPolicy } from '../../context.ts';

export class RetryBudget {
  readonly #policy: RetryPolicy | undefined;
  #left: number;

  constructor(policy: RetryPolicy | undefined, replayable: boolean) {
    this.#policy = policy;
    this.#left = policy && replayable ? policy.attempts : 0;
  }

  get backoffMs(): number {
    return this.#policy?.backoffMs ?? 0;
  }

  /** Takes one retry for an upstream answer with `status`, if the policy retries it. */
  takeForStatus(status: number): boolean {
    if (this.#left <= 0 || !this.#policy!.codes.has(status)) return false;
    this.#left--;
    return true;
  }

  /** Takes one retry for a failure to connect (always retriable while the budget lasts). */
  takeForConnectFailure(): boolean {
    if (this.#left <= 0) return false;
    this.#left--;
    return true;
  }
}
