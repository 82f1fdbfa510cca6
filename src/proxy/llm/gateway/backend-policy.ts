/**
 * The backend-policy layer on a provider call: the same compiled policy a Service forward runs
 * (backend-policies/compile.ts, one per provider through `subBackend`), applied before anything
 * is planned or sent — an invalid policy answers 500 and nothing reaches the provider (no
 * credential fallback of any kind, the process's ambient cloud keys included), then extAuth and
 * transformation run on the request's policy context and the header changes they make go on the
 * provider request. Credentials are written afterwards by LlmCredentials.
 *
 * Also here: which client credentials a provider request must not carry (SPEC.md: a provider
 * that gets its own credential never sees the client's unless `auth.passthrough` asks for it).
 */
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { CompiledBackendPolicy } from '../../backend-policies/compile.ts';
import { FAIL_CLOSED } from '../../backend-policies/forward.ts';
import { hasRequestSteps, runRequestSteps } from '../../backend-policies/request-steps.ts';
import type { PolicyContext, RequestIdentity } from '../../policies/context.ts';
import type { DirectResponse, PolicyResult } from '../../policies/result.ts';
import type { CredentialHint } from '../providers/types.ts';

/** Headers a request step set (name → value) or removed (value undefined), lowercase names. */
export type HeaderChanges = ReadonlyMap<string, string | undefined>;

const NO_CHANGES: HeaderChanges = new Map();

export type PolicyGate =
  | { readonly kind: 'refused'; readonly response: DirectResponse }
  | { readonly kind: 'passed'; readonly headers: HeaderChanges };

const PASSED: PolicyGate = Object.freeze({ kind: 'passed', headers: NO_CHANGES });
const REFUSED: PolicyGate = Object.freeze({ kind: 'refused', response: FAIL_CLOSED });

/**
 * Runs the provider's backend policy for one attempt. `runtime` is the compiled policy the
 * pipeline handed over (undefined when the handler is driven without one: then a policy with
 * request steps cannot be applied and fails closed too). `ran` remembers the outcome per
 * compiled policy within one request, so a failover to a provider under the same policy does not
 * ask the authorization service twice or transform twice.
 */
export function gateProviderCall(
  runtime: CompiledBackendPolicy | undefined,
  effective: BackendPolicy | undefined,
  ctx: PolicyContext | undefined,
  ran: Map<CompiledBackendPolicy, PolicyGate>,
): PolicyGate | Promise<PolicyGate> {
  if ((effective?.invalid?.length ?? 0) > 0) return REFUSED;
  if (!runtime) return effective?.extAuth !== undefined || effective?.transformation !== undefined ? REFUSED : PASSED;
  if (runtime.invalid.length > 0) return REFUSED;
  if (!hasRequestSteps(runtime)) return PASSED;
  const earlier = ran.get(runtime);
  if (earlier) return earlier;
  // The pipeline makes a context whenever the policy needs one; without it nothing can be checked.
  if (!ctx) return REFUSED;
  const before = { ...ctx.upstreamHeaders };
  const settle = (result: PolicyResult): PolicyGate => {
    const gate: PolicyGate = result.action === 'respond' ? { kind: 'refused', response: result.response } : { kind: 'passed', headers: headerChanges(before, ctx.upstreamHeaders) };
    ran.set(runtime, gate);
    return gate;
  };
  const result = runRequestSteps(runtime, ctx);
  return result instanceof Promise ? result.then(settle) : settle(result);
}

function headerChanges(before: Readonly<Record<string, string | string[] | undefined>>, after: Readonly<Record<string, string | string[] | undefined>>): HeaderChanges {
  const changes = new Map<string, string | undefined>();
  for (const [name, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : value;
    const was = before[name];
    if ((Array.isArray(was) ? was.join(', ') : was) !== joined) changes.set(name.toLowerCase(), joined);
  }
  for (const name of Object.keys(before)) if (after[name] === undefined) changes.set(name.toLowerCase(), undefined);
  return changes.size === 0 ? NO_CHANGES : changes;
}

/** Applies request-step header changes to a provider request's headers (in place). */
export function applyHeaderChanges(headers: Record<string, string>, changes: HeaderChanges): void {
  for (const [name, value] of changes) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
}

/**
 * Client headers that carry a credential for the gateway or for another API: never forwarded to
 * a provider that gets its own credential (their values are the client's, not the operator's).
 */
export const CLIENT_CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie'];

/**
 * Whether the provider request gets a credential from the gateway: any configured auth other than
 * `passthrough`, or SigV4 signing the provider always needs. With `passthrough` the client's own
 * credential is the one meant for the provider.
 */
export function providerHasOwnCredential(auth: BackendPolicy['auth'], hint: CredentialHint): boolean {
  if (auth?.passthrough !== undefined) return false;
  return auth !== undefined || hint.kind === 'sigv4';
}

/** Removes the client's credentials (fixed names and the headers a client-auth policy read) from `headers`, in place. */
export function dropClientCredentials(headers: Record<string, string>, identity: Readonly<RequestIdentity> | undefined): void {
  for (const name of CLIENT_CREDENTIAL_HEADERS) delete headers[name];
  for (const name of identity?.credentialHeaders ?? []) delete headers[name];
}
