/**
 * The backend-policy layer on a provider call: the same compiled policy a Service forward runs
 * (policies/backend/compile.ts, one per provider through `subBackend`), applied before anything
 * is planned or sent — an invalid policy answers 500 and nothing reaches the provider (no
 * credential fallback of any kind, the process's ambient cloud keys included), then extAuth and
 * transformation run on the request's policy context and the header changes they make go on the
 * provider request. Credentials are written afterwards by LlmCredentials.
 *
 * Also here: which client credentials a provider request must not carry (SPEC.md: a provider
 * that gets its own credential never sees the client's unless `auth.passthrough` asks for it).
 */
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { RequestIdentity } from '../../policies/context.ts';
import type { CredentialHint } from '../translate/providers/types.ts';

// The gate is shared with MCP target calls (policies/backend/gate.ts); the provider side keeps its names.
export { gateUpstreamCall as gateProviderCall, type PolicyGate } from '../../policies/backend/gate.ts';
export { applyHeaderChanges, type HeaderChanges } from '../../policies/backend/policy-headers.ts';

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
