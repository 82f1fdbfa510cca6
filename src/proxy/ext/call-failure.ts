/**
 * Why a call to an external service (ext_authz, rate limit) failed, as one short line for the
 * gateway's log: the client answering the request sees the same 403/500 for a deadline, a refused
 * connection and an oversized answer, and this is how an operator tells them apart.
 */
import { Code, ConnectError } from '@connectrpc/connect';

/** A cause is one line of at most this many characters: a service's error text is not ours to log whole. */
const MAX_CAUSE_CHARS = 200;

export function shortCause(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > MAX_CAUSE_CHARS ? `${line.slice(0, MAX_CAUSE_CHARS)}…` : line;
}

export function deadlineCause(timeoutMs: number): string {
  return `no answer within the ${timeoutMs} ms deadline`;
}

/** A gRPC call's failure as its status says it (connect-rpc gives every failure one). */
export function grpcCallFailure(err: unknown, timeoutMs: number): string {
  const failure = ConnectError.from(err);
  if (failure.code === Code.DeadlineExceeded) return deadlineCause(timeoutMs);
  return shortCause(`gRPC ${Code[failure.code]}: ${failure.rawMessage}`);
}

/** An HTTP call's failure: the socket's code (ECONNREFUSED, UND_ERR_…) and message. */
export function httpCallFailure(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return shortCause(typeof code === 'string' ? `${code}: ${message}` : message);
}
