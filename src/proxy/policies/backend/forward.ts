import type { HeaderMap } from '../../http/headers.ts';
import { BodyTooLargeError, type PolicyContext } from '../context.ts';
import { respondError, type DirectResponse, type PolicyResult } from '../result.ts';
import type { CompiledBackendPolicy, PreparedRequest } from './compile.ts';
import type { UpstreamTarget } from './pools.ts';
import { TokenEndpointError, TokenExchangeRejection } from './oauth-endpoint.ts';
import { serviceCall, type ForwardView } from './cloud-auth.ts';
import { CredentialError, CredentialRequestError, CredentialUnavailableError } from '../credentials/backend-credentials.ts';
import { hasRequestSteps, runRequestSteps } from './request-steps.ts';

/** The answer to a request under an invalid backend policy, on every kind: 500, nothing sent. */
export const FAIL_CLOSED = responseOf(respondError(500, 'policy_invalid', 'a backend policy that applies to this route is invalid'));

/**
 * What the upstream leg reads of a forward: its endpoint, upstream headers and path (and what
 * serviceCall reads). The pipeline's UpstreamForward is one; the leg hands it back to `start`
 * whole, so this layer never names the pipeline's type.
 */
export interface ForwardedRequest extends ForwardView {
  readonly target: UpstreamTarget;
  readonly headers: HeaderMap;
  readonly path: string;
}

export interface ForwardSteps<C extends PolicyContext, F extends ForwardedRequest> {
  /** Sends the (transformed, credentialed) request upstream with the request's policy context. */
  start(fwd: F, done: (status: number, bytes: number) => void, policy: C | undefined): void;
  /** Answers from the gateway instead (invalid policy, a transformation answer, failed signing). */
  respond(response: DirectResponse, policy: C | undefined): number;
  /** A policy context for requests no traffic policy ran on (backend transformation needs one). */
  createContext(): C;
}

/**
 * The upstream leg under a compiled backend policy: fail closed on an invalid policy, run the
 * backend extAuth and transformation, write the backend credentials, then forward, feeding the
 * outcome to passive health.
 */
export function forwardWithBackendPolicy<C extends PolicyContext, F extends ForwardedRequest>(
  runtime: CompiledBackendPolicy,
  fwd: F,
  policy: C | undefined,
  done: (status: number, bytes: number) => void,
  steps: ForwardSteps<C, F>,
): void {
  if (runtime.invalid.length > 0) {
    done(steps.respond(FAIL_CLOSED, policy), 0);
    return;
  }
  const target = fwd.target;
  const finish = (status: number, bytes: number) => {
    runtime.recordOutcome(target, status);
    done(status, bytes);
  };
  const fail = (err: unknown) => {
    if (err instanceof BodyTooLargeError) {
      done(steps.respond(responseOf(respondError(413, 'payload_too_large', err.message)), policy), 0);
      return;
    }
    if (err instanceof TokenExchangeRejection) {
      done(steps.respond(responseOf(respondError(err.status, 'backend_token_exchange_rejected', err.message)), policy), 0);
      return;
    }
    if (err instanceof CredentialRequestError) {
      done(steps.respond(responseOf(respondError(err.status, 'backend_credential_rejected', err.message)), policy), 0);
      return;
    }
    if (err instanceof TokenEndpointError || err instanceof CredentialUnavailableError) {
      // The token endpoint is an upstream dependency: no credential, no forwarding. Its address stays private.
      done(steps.respond(responseOf(respondError(502, 'backend_token_endpoint_failed', 'the gateway could not obtain a token for the backend')), policy), 0);
      return;
    }
    // No credential, no forwarding (fail closed); which keys or variables are missing stays in the gateway's configuration.
    const message = err instanceof CredentialError ? 'the gateway has no credential for the backend' : `the backend policy could not be applied: ${(err as Error).message}`;
    const failure = respondError(500, 'backend_policy_failed', message);
    done(steps.respond(responseOf(failure), policy), 0);
  };
  const credentials = (ctx: C | undefined) => {
    // Transformations change the headers in place: the context's upstream headers are fwd.headers.
    const go = (prepared: PreparedRequest) => steps.start({ ...fwd, headers: prepared.headers, path: prepared.path }, finish, ctx);
    const prepared = runtime.prepare(fwd.headers, fwd.path, ctx, runtime.needsCall ? serviceCall(fwd, ctx) : undefined);
    if (prepared instanceof Promise) prepared.then(go, fail);
    else go(prepared);
  };
  const ctx = runtime.needsContext ? (policy ?? steps.createContext()) : policy;
  if (!ctx || !hasRequestSteps(runtime)) {
    credentials(ctx);
    return;
  }
  const proceed = (result: PolicyResult) => {
    if (result.action === 'respond') done(steps.respond(result.response, ctx), 0);
    else credentials(ctx);
  };
  try {
    const result = runRequestSteps(runtime, ctx);
    if (result instanceof Promise) result.then(proceed, fail);
    else proceed(result);
  } catch (err) {
    fail(err);
  }
}

function responseOf(result: PolicyResult): DirectResponse {
  if (result.action !== 'respond') throw new Error('expected a response');
  return result.response;
}
