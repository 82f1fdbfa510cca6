/**
 * Credentials on an upstream LLM request: the shared backend-policy credentials
 * (src/proxy/policies/credentials/backend-credentials.ts — keys, cloud-A signing, cloud-B/cloud-C
 * tokens, token mechanisms) with what the provider decides: the header its key goes to when the
 * policy names no location, and SigV4 with its service and region for providers that need it
 * (providerG), over every header the gateway built.
 */
import type { CelInput } from '../../../../cel/index.ts';
import type { BackendAuthPolicy, CredentialLocation } from '../../../../ir/policy.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import {
  BackendCredentials, CredentialRequestError as SharedRequestError, type CredentialDefaults,
} from '../../../policies/credentials/backend-credentials.ts';
import type { TokenCache } from '../../../policies/credentials/token-cache.ts';
import type { CredentialHint } from '../../translate/providers/types.ts';
import { AiPolicyError } from '../body-policy.ts';

export { CredentialError, DEFAULT_SESSION_NAME } from '../../../policies/credentials/backend-credentials.ts';

/**
 * The request itself cannot be given a credential (assumed-role session name or tag from CEL
 * invalid, no usable subject token): answered in the client's format with this status; no other
 * provider is tried (the same request would fail there too).
 */
export class CredentialRequestError extends AiPolicyError {}

export interface SignedRequest {
  readonly headers: Record<string, string>;
  readonly path: string;
}

export interface SignableRequest {
  /** The Host header the request is sent with. */
  readonly host: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly credential: CredentialHint;
}

const BEARER: CredentialLocation = { header: { name: 'authorization', prefix: 'Bearer ' } };

/** What a provider's credential hint means for the shared credentials (computed once per hint object). */
const defaultsOf = new WeakMap<CredentialHint, CredentialDefaults>();

function providerDefaults(hint: CredentialHint): CredentialDefaults {
  let defaults = defaultsOf.get(hint);
  if (!defaults) {
    defaults = hint.kind === 'header'
      ? { location: { header: { name: hint.name, ...(hint.prefix ? { prefix: hint.prefix } : {}) } }, signedHeaders: 'all' }
      : { location: BEARER, sigv4: { service: hint.service, region: hint.region }, signedHeaders: 'all' };
    defaultsOf.set(hint, defaults);
  }
  return defaults;
}

export class LlmCredentials {
  readonly #shared: BackendCredentials;

  constructor(opts: { tokens?: TokenCache; env?: NodeJS.ProcessEnv } = {}) {
    this.#shared = new BackendCredentials(opts);
  }

  /**
   * The headers and path to send. Throws CredentialError when the configured mechanism cannot
   * produce a credential (502: the next provider may have other credentials),
   * CredentialRequestError when this request cannot have one. `cel` gives the request's CEL input
   * for those expressions; without it they see only the identity (jwt, apiKey, basicAuth,
   * extauthz, extproc). Synchronous unless a token must be obtained.
   */
  apply(req: SignableRequest, auth: BackendAuthPolicy | undefined, identity: Readonly<RequestIdentity>, cel?: () => CelInput): SignedRequest | Promise<SignedRequest> {
    let out;
    try {
      out = this.#shared.apply(req, auth, identity, cel, providerDefaults(req.credential));
    } catch (err) {
      throw asLlmError(err);
    }
    return out instanceof Promise ? out.then(flatten, (err: unknown) => Promise.reject(asLlmError(err))) : flatten(out);
  }
}

function asLlmError(err: unknown): unknown {
  return err instanceof SharedRequestError ? new CredentialRequestError(err.message, err.status) : err;
}

/** Provider requests carry one value per header. */
function flatten(prepared: { headers: Record<string, string | string[]>; path: string }): SignedRequest {
  const headers: Record<string, string> = {};
  for (const name in prepared.headers) {
    const value = prepared.headers[name];
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { headers, path: prepared.path };
}
