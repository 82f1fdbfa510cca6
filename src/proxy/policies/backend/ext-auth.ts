/**
 * Backend `extAuth` (SPEC.md BackendFull): the traffic extAuth member's own step — the same
 * ext_authz clients, FailOpen/FailClosed, header mutations, `extauthz` metadata and lifecycle —
 * compiled for one upstream call's policy and run after the traffic policies, before the
 * transformation and the credentials (request-steps.ts). Every kind runs it the same way.
 */
import type { BackendPolicy } from '../../../ir/policy.ts';
import { compileTrafficPolicy, type CompiledTrafficPolicy } from '../chain.ts';
import type { StepDeps } from '../step.ts';

/** What compiling a backend extAuth needs of the runtime: services by backendRef, shared connections, the config's lifecycle. */
export type BackendStepDeps = Omit<StepDeps, 'policy'>;

/**
 * The backend policy's extAuth as a one-step policy, or undefined when it has none. A member that
 * does not compile is reported through `fail` and left out; the caller then fails closed.
 */
export function compileBackendExtAuth(policy: BackendPolicy, deps: BackendStepDeps, fail: (message: string) => void): CompiledTrafficPolicy | undefined {
  if (policy.extAuth === undefined) return undefined;
  const sources = policy.sources.extAuth ? { extAuth: policy.sources.extAuth } : {};
  const errors: string[] = [];
  const compiled = compileTrafficPolicy({ extAuth: policy.extAuth, sources }, deps, (message) => errors.push(message));
  if (compiled.invalid.length > 0) {
    for (const invalid of compiled.invalid) fail(invalid.message.replace(/^traffic\./, 'backend.'));
    return undefined;
  }
  return compiled;
}
