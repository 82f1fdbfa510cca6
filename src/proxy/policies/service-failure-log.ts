/**
 * The warning a policy logs when its external service (ext_authz, the global rate limit) could not
 * decide: the answer the client gets (403, 500, or a pass under FailOpen) is the same for a
 * deadline, a refused connection and an oversized answer, so this line, with the cause, is how an
 * operator tells them apart. A service that keeps failing logs at most one line per interval per
 * compiled policy, with the number of failures the line stands for — never one per request.
 */
import type { Logger } from '../../common/logger.ts';

export const FAILURE_LOG_INTERVAL_MS = 10_000;

export type FailureMode = 'FailClosed' | 'FailOpen';

/** `what`: the service, as the message names it ("the authorization service"). */
export function serviceFailureLog(logger: Logger, what: string, service: string | undefined, failureMode: FailureMode | undefined): (cause: string) => void {
  const mode = failureMode ?? 'FailClosed';
  const msg = mode === 'FailOpen' ? `${what} could not decide; request let through (FailOpen)` : `${what} could not decide; request denied (FailClosed)`;
  let lastAt = -Infinity;
  let unlogged = 0;
  return (cause) => {
    unlogged++;
    const now = performance.now();
    if (now - lastAt < FAILURE_LOG_INTERVAL_MS) return;
    lastAt = now;
    logger.warn({ service, cause, failures: unlogged, failureMode: mode }, msg);
    unlogged = 0;
  };
}
