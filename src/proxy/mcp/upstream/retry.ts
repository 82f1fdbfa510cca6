/**
 * traffic `retry` on MCP target calls (docs/mcp.md "Retries"). One JSON-RPC message POSTed to a
 * target is sent again, after the policy's backoff and while its attempts last, when
 *
 * - the connection to the target could not be made (nothing reached it), or
 * - the target answered the POST with a status the policy names, before any JSON-RPC answer: the
 *   HTTP layer refused the message, so the target produced no result for it.
 *
 * Nothing is resent once the target answered 2xx (a JSON answer or an SSE stream started: the
 * message was accepted, a stream that breaks afterwards is a failure, not a retry), nor when the
 * exchange timed out or the client went away. GET streams and DELETEs are never retried. The
 * message body is a string the gateway built, so every attempt can replay it (RetryBudget).
 * The budget and backoff are the Service pipeline's (policies/traffic/retry/attempts.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { isConnectFailure, upstreamFailure } from '../../http/errors.ts';
import type { RetryPolicy } from '../../policies/context.ts';
import { RetryBudget } from '../../policies/traffic/retry/attempts.ts';

/** Told of every attempt's outcome (passive health): the HTTP status, or 503 for a failure to connect and 502 for another transport error. */
export type OutcomeRecorder = (status: number) => void;

/** Status recorded when the target could not be reached at all (as a Service upstream's connect failure). */
export const CONNECT_FAILED_STATUS = 503;
/** Status recorded when the exchange broke otherwise (reset, protocol error). */
const TRANSPORT_FAILED_STATUS = 502;

/**
 * Sends one message with `send` (a fresh dispatch each call) under `policy`; resolves with the
 * first answer that is not retried. A retried answer's body is drained first (the connection stays usable).
 */
export function sendWithRetry(
  send: () => Promise<Dispatcher.ResponseData>,
  policy: RetryPolicy | undefined,
  signal: AbortSignal | undefined,
  record: OutcomeRecorder | undefined,
): Promise<Dispatcher.ResponseData> {
  // Neither retry nor health on this target: the plain send, no extra async hop.
  if (policy === undefined && record === undefined) return send();
  return attempts(send, policy, signal, record);
}

async function attempts(
  send: () => Promise<Dispatcher.ResponseData>,
  policy: RetryPolicy | undefined,
  signal: AbortSignal | undefined,
  record: OutcomeRecorder | undefined,
): Promise<Dispatcher.ResponseData> {
  const budget = policy ? new RetryBudget(policy, true) : undefined;
  for (;;) {
    let response: Dispatcher.ResponseData;
    try {
      response = await send();
    } catch (error) {
      const connectFailed = isConnectFailure(upstreamFailure('', error));
      // An aborted exchange (deadline, client gone) is not the target's fault: health does not count it.
      if (signal?.aborted !== true) record?.(connectFailed ? CONNECT_FAILED_STATUS : TRANSPORT_FAILED_STATUS);
      if (signal?.aborted === true || !connectFailed || budget?.takeForConnectFailure() !== true) throw error;
      await sleep(budget.backoffMs, undefined, signal ? { signal } : undefined);
      continue;
    }
    record?.(response.statusCode);
    if (budget?.takeForStatus(response.statusCode) !== true) return response;
    await response.body.dump();
    await sleep(budget.backoffMs, undefined, signal ? { signal } : undefined);
  }
}
