import type { UpstreamForward } from '../pipeline/exchange.ts';
import type { RequestIdentity } from '../policies/context.ts';
import { respondError, type DirectResponse } from '../policies/result.ts';
import type { CompiledBackendPolicy, PreparedRequest } from './compile.ts';

const NO_IDENTITY: RequestIdentity = Object.freeze({});
const FAIL_CLOSED = respondError(500, 'policy_invalid', 'a backend policy that applies to this route is invalid');

export interface ForwardSteps {
  /** Sends the (credentialed) request upstream; `done` is the request's completion callback. */
  start(fwd: UpstreamForward, done: (status: number, bytes: number) => void): void;
  /** Answers from the gateway instead (invalid policy, failed credential signing). */
  respond(response: DirectResponse): void;
}

/**
 * The upstream leg under a compiled backend policy: fail closed on an invalid policy, write the
 * backend credentials, then forward, feeding the outcome to passive health.
 */
export function forwardWithBackendPolicy(
  runtime: CompiledBackendPolicy,
  fwd: UpstreamForward,
  identity: Readonly<RequestIdentity> | undefined,
  done: (status: number, bytes: number) => void,
  steps: ForwardSteps,
): void {
  if (runtime.invalid.length > 0) {
    steps.respond((FAIL_CLOSED as { response: DirectResponse }).response);
    done(500, 0);
    return;
  }
  const target = fwd.target;
  const finish = (status: number, bytes: number) => {
    runtime.recordOutcome(target, status);
    done(status, bytes);
  };
  const go = (prepared: PreparedRequest) => steps.start({ ...fwd, headers: prepared.headers, path: prepared.path }, finish);
  const prepared = runtime.prepare(fwd.headers, fwd.path, identity ?? NO_IDENTITY);
  if (!(prepared instanceof Promise)) {
    go(prepared);
    return;
  }
  prepared.then(go, (err: unknown) => {
    steps.respond((respondError(500, 'backend_auth_failed', `backend credentials could not be prepared: ${(err as Error).message}`) as { response: DirectResponse }).response);
    done(500, 0);
  });
}
