/**
 * Backend `http.requestTimeout` on MCP targets: a deadline for one JSON-RPC exchange with a
 * target — from sending the message until its response message arrives, whether the answer is
 * JSON, an SSE stream (whose head a target sends at once) or an event on a legacy SSE stream.
 * Past it the target request is aborted and the client gets a JSON-RPC error with
 * `data {status: 504, code: upstream_timeout}` (docs/errors.md).
 */
import { jsonRpcGatewayError } from '../../http/error-format.ts';
import { McpError } from '../jsonrpc.ts';

/** A target did not answer one message within its backend `http.requestTimeout`. */
export class UpstreamTimeoutError extends McpError {
  readonly target: string;

  constructor(target: string, timeoutMs: number) {
    const error = jsonRpcGatewayError(504, { code: 'upstream_timeout', message: `MCP target "${target}" timed out after ${timeoutMs} ms (backend http.requestTimeout)` });
    super(error.code, error.message, error.data);
    this.target = target;
  }
}

/** The signal one exchange runs under: the caller's, plus the deadline when the target has one. */
export interface CallDeadline {
  readonly signal: AbortSignal | undefined;
  /** `error` as the caller should see it: the timeout error when the deadline (not the caller) ended the exchange. */
  explain(error: unknown): unknown;
}

export function callDeadline(target: string, timeoutMs: number | undefined, signal: AbortSignal | undefined): CallDeadline {
  if (timeoutMs === undefined) return { signal, explain: (error) => error };
  const timer = AbortSignal.timeout(timeoutMs);
  return {
    signal: signal ? AbortSignal.any([signal, timer]) : timer,
    explain: (error) => (timer.aborted && signal?.aborted !== true ? new UpstreamTimeoutError(target, timeoutMs) : error),
  };
}
