/**
 * Puts the backend's credentials on an upstream LLM request: keys (inline, from a Secret, or the
 * client's validated token with passthrough) where the provider expects them unless `location`
 * says otherwise, extra `credentials[]`, cloud-B/cloud-C bearer tokens (cached: Entra client
 * secret, workload or managed identity; Google access or ID tokens), the shared backend-policy
 * token mechanisms (`jwtSign`, `oauthTokenExchange`, `crossAppAccess`: a signed or exchanged
 * token at the mechanism's location, default Authorization Bearer), and SigV4
 * for providers that need it (signed last, over the final headers and body) — with the Secret's
 * or the environment's keys, or with the session of an assumed role (STS, cached per role,
 * session name and tags).
 */
import { readFileSync } from 'node:fs';
import { compile, createActivation, evalString, type Activation, type CelInput } from '../../../../cel/index.ts';
import type { BackendAuthPolicy, CredentialLocation } from '../../../../ir/policy.ts';
import type { IncomingHttpHeaders } from 'node:http';
import { applyBackendCredentials, writeCredential } from '../../../policies/backend/auth.ts';
import { TokenExchangeRejection, type CredentialSource } from '../../../policies/backend/oauth-endpoint.ts';
import { compileTokenMechanism, type TokenMechanism } from '../../../policies/backend/token-auth.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import type { CredentialHint } from '../../translate/providers/types.ts';
import { AiPolicyError } from '../body-policy.ts';
import { awsCredentials, signSigV4, type AwsCredentials } from './sigv4.ts';
import { assumeRole, stsEndpoint, type SessionCredentials } from './sts.ts';
import { azureAccessToken, azureManagedIdentityToken, azureWorkloadToken, gcpAccessToken, gcpIdToken, gcpMetadataToken, parseServiceAccount, type ServiceAccount } from './oauth.ts';
import { TokenCache, type FetchedToken } from './token-cache.ts';

/** A credential could not be produced (missing cloud credentials, token endpoint down). */
export class CredentialError extends Error {}

/**
 * The request itself cannot be given a credential: an assumed-role session name or session tag
 * computed from it is not valid (SPEC.md: "request rejected"). Answered in the client's format
 * with this status; no other provider is tried (the same request would fail there too).
 */
export class CredentialRequestError extends AiPolicyError {}

/** Session name when assumeRole names none. */
export const DEFAULT_SESSION_NAME = 'switchboard';
const SESSION_NAME = /^[A-Za-z0-9+=,.@_-]{2,64}$/;
/** STS tag keys and values: letters, separators, digits and `_.:/=+-@`. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

/**
 * The token mechanism of each auth object (the IR is immutable; weak: config swaps drop them),
 * so its token cache lives as long as the configuration. A configuration that cannot work is
 * kept as its error and fails every request that uses it.
 */
const mechanisms = new WeakMap<BackendAuthPolicy, { readonly mechanism?: TokenMechanism; readonly error?: string }>();

function mechanismOf(auth: BackendAuthPolicy): TokenMechanism | undefined {
  let compiled = mechanisms.get(auth);
  if (!compiled) {
    try {
      compiled = { mechanism: compileTokenMechanism(auth) };
    } catch (err) {
      compiled = { error: (err as Error).message };
    }
    mechanisms.set(auth, compiled);
  }
  if (compiled.error !== undefined) throw new CredentialError(`backend auth cannot be applied: ${compiled.error}`);
  return compiled.mechanism;
}

/**
 * The client request as the token mechanisms read it (subject and actor tokens, CEL parameters),
 * from the request's CEL input: its headers and query are the client's own. Without one (no CEL
 * input given) the request has no tokens to offer.
 */
function requestSource(cel: (() => CelInput) | undefined, identity: Readonly<RequestIdentity>): CredentialSource {
  const input = cel?.() ?? identityCel(identity);
  const url = input.request?.url ?? '';
  const q = url.indexOf('?');
  return {
    downstreamHeaders: (input.request?.headers ?? {}) as IncomingHttpHeaders,
    query: q < 0 ? '' : url.slice(q + 1),
    identity: identity as RequestIdentity,
    cel: () => input,
  };
}

/** How a request is SigV4-signed: with which keys, for which service and region. */
interface Signing {
  readonly credentials: AwsCredentials;
  readonly service: string;
  readonly region: string;
}

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

type Dict = Readonly<Record<string, unknown>>;
const dict = (v: unknown): Dict | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Dict) : undefined);

/** Where a provider expects its key when the policy names no location. */
function defaultLocation(hint: CredentialHint): CredentialLocation {
  return hint.kind === 'header' ? { header: { name: hint.name, ...(hint.prefix ? { prefix: hint.prefix } : {}) } } : { header: { name: 'authorization', prefix: 'Bearer ' } };
}

export class LlmCredentials {
  readonly #tokens: TokenCache;
  readonly #env: NodeJS.ProcessEnv;

  constructor(opts: { tokens?: TokenCache; env?: NodeJS.ProcessEnv } = {}) {
    this.#tokens = opts.tokens ?? new TokenCache();
    this.#env = opts.env ?? process.env;
  }

  /**
   * The headers and path to send. Throws CredentialError when the configured mechanism cannot
   * produce a credential, CredentialRequestError when this request cannot have one (assumed-role
   * session name or tag from CEL invalid). `cel` gives the request's CEL input for those
   * expressions; without it they see only the identity (jwt, apiKey, basicAuth, extauthz, extproc).
   *
   * Synchronous unless a token must be obtained (a token mechanism, cloud-B/cloud-C, an assumed
   * role): keys and SigV4 with fixed keys are most requests, and a promise per request showed in
   * the translated route's profile.
   */
  apply(req: SignableRequest, auth: BackendAuthPolicy | undefined, identity: Readonly<RequestIdentity>, cel?: () => CelInput): SignedRequest | Promise<SignedRequest> {
    const mechanism = auth ? mechanismOf(auth) : undefined;
    const role = dict(dict(auth?.cloudA)?.assumeRole);
    if (mechanism === undefined && role === undefined && auth?.cloudB === undefined && auth?.cloudC === undefined) {
      return this.#write(req, auth, undefined, undefined, identity, this.#signing(req, auth, undefined));
    }
    return this.#applyWithTokens(req, auth, mechanism, role, identity, cel);
  }

  async #applyWithTokens(req: SignableRequest, auth: BackendAuthPolicy | undefined, mechanism: TokenMechanism | undefined, role: Dict | undefined, identity: Readonly<RequestIdentity>, cel: (() => CelInput) | undefined): Promise<SignedRequest> {
    let token: string | undefined;
    if (mechanism) token = await mechanismToken(mechanism, requestSource(cel, identity));
    else if (auth) token = await this.#oauthToken(auth, req.host);
    const signing = this.#signing(req, auth, mechanism);
    const session = role && signing ? await this.#assumedRole(role, signing.credentials, signing.region, identity, cel) : undefined;
    return this.#write(req, auth, mechanism, token, identity, signing && session ? { ...signing, credentials: session } : signing);
  }

  /**
   * Writes the credentials once every token is at hand: `token` is the mechanism's or the cloud
   * bearer token; `signing` (with the assumed role's session keys, if any) signs last.
   */
  #write(req: SignableRequest, auth: BackendAuthPolicy | undefined, mechanism: TokenMechanism | undefined, token: string | undefined, identity: Readonly<RequestIdentity>, signing: Signing | undefined): SignedRequest {
    let written: { headers: Record<string, string | string[]>; path: string } = { headers: { ...req.headers }, path: req.path };
    if (auth && mechanism && token !== undefined) {
      const extras = applyBackendCredentials(written.headers, written.path, auth, identity);
      written = writeCredential(extras.headers, extras.path, mechanism.location, token);
    } else if (auth) {
      const primary: BackendAuthPolicy = token !== undefined ? { ...auth, key: token, location: { header: { name: 'authorization', prefix: 'Bearer ' } } } : { ...auth, location: auth.location ?? defaultLocation(req.credential) };
      written = applyBackendCredentials(written.headers, written.path, primary, identity);
    }
    const headers: Record<string, string> = {};
    for (const name in written.headers) {
      const value = written.headers[name];
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    if (!signing) return { headers, path: written.path };
    return { headers: signSigV4({ ...req, headers, path: written.path, service: signing.service, region: signing.region }, signing.credentials), path: written.path };
  }

  /** SigV4 parameters when the request must be signed: the provider needs it or cloudA is configured, and no key or token mechanism was chosen instead. */
  #signing(req: SignableRequest, auth: BackendAuthPolicy | undefined, mechanism: TokenMechanism | undefined): Signing | undefined {
    const hint = req.credential;
    const signingWanted = hint.kind === 'sigv4' || auth?.cloudA !== undefined;
    // A key or a token mechanism is the credential the operator chose: no signing on top of it.
    if (!signingWanted || ((auth?.key !== undefined || mechanism !== undefined) && auth?.cloudA === undefined)) return undefined;
    const cloudA = dict(auth?.cloudA);
    const credentials = awsCredentials(dict(cloudA?.secret), this.#env);
    if (!credentials) throw new CredentialError('no cloud-A credentials: set auth.cloudA.secretRef or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY');
    const service = (typeof cloudA?.serviceName === 'string' ? cloudA.serviceName : undefined) ?? (hint.kind === 'sigv4' ? hint.service : undefined);
    const region = (typeof cloudA?.region === 'string' ? cloudA.region : undefined) ?? (hint.kind === 'sigv4' ? hint.region : undefined) ?? this.#env.AWS_REGION;
    if (!service || !region) throw new CredentialError('cloud-A signing needs a service name and region');
    return { credentials, service, region };
  }

  /**
   * The session credentials of `cloudA.assumeRole`, obtained with the base keys from STS in the
   * signing region and cached per (endpoint, base key, role, session name, tags) until shortly
   * before they expire.
   */
  async #assumedRole(role: Dict, base: AwsCredentials, region: string, identity: Readonly<RequestIdentity>, cel: (() => CelInput) | undefined): Promise<SessionCredentials> {
    const roleArn = typeof role.roleIdentifier === 'string' ? role.roleIdentifier : '';
    if (!roleArn) throw new CredentialError('cloudA.assumeRole has no roleIdentifier');
    let activation: Activation | undefined;
    const evaluate = (expression: string, what: string): string => {
      const compiled = compile(expression);
      if (!compiled.ok) throw new CredentialError(`cloudA.assumeRole ${what}: invalid CEL expression: ${compiled.error.message}`);
      activation ??= createActivation(cel ? cel() : identityCel(identity));
      const result = evalString(compiled.program, activation);
      if (!result.ok) throw new CredentialRequestError(`the request yields no ${what} for the provider's role (${result.error.message})`, 403);
      return result.value;
    };
    let sessionName = typeof role.sessionName === 'string' ? role.sessionName : DEFAULT_SESSION_NAME;
    if (typeof role.sessionNameExpression === 'string') {
      sessionName = evaluate(role.sessionNameExpression, 'session name');
      if (!SESSION_NAME.test(sessionName)) throw new CredentialRequestError('the session name computed from the request is not 2 to 64 letters, digits or +=,.@-_', 403);
    }
    const tags = (Array.isArray(role.tags) ? role.tags : []).map((raw) => {
      const tag = dict(raw) ?? {};
      const key = typeof tag.key === 'string' ? tag.key : '';
      if (typeof tag.expression !== 'string') return { key, value: typeof tag.value === 'string' ? tag.value : '' };
      const value = evaluate(tag.expression, `value for session tag ${JSON.stringify(key)}`);
      if (value.length > 256 || !TAG_TEXT.test(value)) throw new CredentialRequestError(`the value computed from the request for session tag ${JSON.stringify(key)} is not a valid tag value (at most 256 letters, digits, spaces or _.:/=+-@)`, 403);
      return { key, value };
    });
    const endpointUrl = this.#env.AWS_ENDPOINT_URL_STS || undefined;
    const endpoint = stsEndpoint(region, endpointUrl).href;
    const key = `sts ${endpoint} ${region} ${base.accessKeyId} ${roleArn} ${sessionName} ${JSON.stringify(tags)}`;
    try {
      return await this.#tokens.get(key, () => assumeRole({ roleArn, sessionName, tags, region, ...(endpointUrl ? { endpointUrl } : {}) }, base));
    } catch (err) {
      throw new CredentialError(`could not assume ${roleArn}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A bearer token from cloudB/cloudC, or undefined when neither is configured. */
  async #oauthToken(auth: BackendAuthPolicy, host: string): Promise<string | undefined> {
    const env = this.#env;
    const cloudC = dict(auth.cloudC);
    if (cloudC) {
      const account = this.#serviceAccount(cloudC.secret);
      if (cloudC.type === 'IdToken') {
        // Cloud Run checks the audience against its service URL: by default the backend's own origin.
        const audience = typeof cloudC.audience === 'string' && cloudC.audience !== '' ? cloudC.audience : `https://${host.replace(/:\d+$/, '')}`;
        if (account) return this.#fetch(`gcp-id ${account.client_email} ${account.token_uri ?? ''} ${audience}`, () => gcpIdToken(account, audience));
        return this.#fetch(`gcp-md-id ${env.GCE_METADATA_HOST ?? ''} ${audience}`, () => gcpMetadataToken('id', env, audience));
      }
      if (account) return this.#fetch(`gcp ${account.client_email} ${account.token_uri ?? ''}`, () => gcpAccessToken(account));
      return this.#fetch(`gcp-md ${env.GCE_METADATA_HOST ?? ''}`, () => gcpMetadataToken('access', env));
    }
    const cloudB = dict(auth.cloudB);
    if (cloudB) {
      const str = (v: unknown) => (typeof v === 'string' ? v : '');
      const authority = env.AZURE_AUTHORITY_HOST ? { authority: env.AZURE_AUTHORITY_HOST } : {};
      const secret = dict(cloudB.secret);
      if (secret) {
        const client = { tenantId: str(secret.tenantID), clientId: str(secret.clientID), clientSecret: str(secret.clientSecret), ...authority };
        if (!client.tenantId || !client.clientId || !client.clientSecret) throw new CredentialError('the cloud-B Secret needs clientID, tenantID and clientSecret');
        return this.#fetch(`azure ${client.tenantId} ${client.clientId} ${client.authority ?? ''}`, () => azureAccessToken(client));
      }
      const managed = dict(cloudB.managedIdentity);
      // Nothing chosen: workload identity when the cluster projected a federated token, else managed identity.
      const workload = cloudB.workloadIdentity !== undefined || (!managed && env.AZURE_FEDERATED_TOKEN_FILE !== undefined);
      if (workload) {
        const w = { tenantId: env.AZURE_TENANT_ID ?? '', clientId: env.AZURE_CLIENT_ID ?? '', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE ?? '', ...authority };
        if (!w.tenantId || !w.clientId || !w.tokenFile) throw new CredentialError('cloud-B workload identity needs AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID and AZURE_TENANT_ID');
        return this.#fetch(`azure-wi ${w.tenantId} ${w.clientId} ${w.tokenFile} ${w.authority ?? ''}`, () => azureWorkloadToken(w));
      }
      const id = { clientId: str(managed?.clientId), objectId: str(managed?.objectId), resourceId: str(managed?.resourceId) };
      const where = env.IDENTITY_ENDPOINT ?? env.AZURE_POD_IDENTITY_AUTHORITY_HOST ?? '';
      return this.#fetch(`azure-mi ${id.clientId} ${id.objectId} ${id.resourceId} ${where}`, () => azureManagedIdentityToken(id, env));
    }
    return undefined;
  }

  /** The Secret's service account JSON, else the ambient GOOGLE_APPLICATION_CREDENTIALS file, else undefined (metadata server). */
  #serviceAccount(secret: unknown): ServiceAccount | undefined {
    const file = this.#env.GOOGLE_APPLICATION_CREDENTIALS;
    if (typeof secret !== 'string' && !file) return undefined;
    try {
      return parseServiceAccount(typeof secret === 'string' ? secret : readFileSync(file as string, 'utf8'));
    } catch (err) {
      // A bad or unreadable key file is a credential problem (502 and a clear log), not an unreachable provider.
      throw new CredentialError(`unusable cloud-C service account: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async #fetch(key: string, fetch: () => Promise<FetchedToken>): Promise<string> {
    try {
      return await this.#tokens.get(key, fetch);
    } catch (err) {
      throw new CredentialError(`could not obtain an access token: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * A token from a backend-policy mechanism. A request that brings no usable subject token is
 * refused with the mechanism's status (401/403, no other provider); a failing token endpoint is
 * a CredentialError (502, the next provider may have other credentials).
 */
async function mechanismToken(mechanism: TokenMechanism, source: CredentialSource): Promise<string> {
  try {
    return await mechanism.token(source);
  } catch (err) {
    if (err instanceof TokenExchangeRejection) throw new CredentialRequestError(err.message, err.status);
    throw new CredentialError(`backend auth ${mechanism.kind}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** What assumed-role expressions see when the caller gave no request CEL input: the identity. */
function identityCel(id: Readonly<RequestIdentity>): CelInput {
  return compactInput({ jwt: id.jwt?.claims, apiKey: id.apiKey, basicAuth: id.basicAuth, extauthz: id.extauthz, extproc: id.extproc });
}

function compactInput(input: CelInput): CelInput {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as CelInput;
}
