/**
 * Puts a backend's credentials on one upstream request, for every kind of upstream call (Service
 * and static backends, AI providers, MCP targets): keys (inline, from a Secret, or the client's
 * validated token with passthrough) at their location, extra `credentials[]`, cloud-B/cloud-C
 * bearer tokens (cached: Entra client secret, workload or managed identity; cloud-C access or ID
 * tokens), the backend-policy token mechanisms (`jwtSign`, `oauthTokenExchange`,
 * `crossAppAccess`), and cloud-A SigV4 signing (last, over the final headers and body) with the
 * Secret's or the environment's keys, or with the session of an assumed role (STS, cached per
 * role, session name and tags).
 *
 * What differs between kinds is given per call as CredentialDefaults: an AI provider names the
 * header its key goes to and whether it must be signed (providerG), a plain backend uses
 * Authorization Bearer and signs only under `auth.cloudA`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { compile, createActivation, evalString, type Activation, type CelInput } from '../../../cel/index.ts';
import type { BackendAuthPolicy, CredentialLocation } from '../../../ir/policy.ts';
import type { RequestIdentity } from '../context.ts';
import { applyBackendCredentials, DEFAULT_CREDENTIAL_LOCATION, writeCredential } from '../backend/auth.ts';
import { TokenExchangeRejection, type CredentialSource } from '../backend/oauth-endpoint.ts';
import { compileTokenMechanism, type TokenMechanism } from '../backend/token-auth.ts';
import { azureAccessToken, azureManagedIdentityToken, azureWorkloadToken, gcpAccessToken, gcpIdToken, gcpMetadataToken, parseServiceAccount, type ServiceAccount } from './cloud-tokens.ts';
import { awsCredentials, signSigV4, UNSIGNED_PAYLOAD, type AwsCredentials } from './sigv4.ts';
import { assumeRole, stsEndpoint, type SessionCredentials } from './sts.ts';
import { TokenCache, type FetchedToken } from './token-cache.ts';

/** A credential could not be produced: missing or unusable cloud credentials, a configuration that cannot work. */
export class CredentialError extends Error {}

/** A token endpoint (Entra, cloud-C, metadata server, STS) failed: the gateway has no credential to send. */
export class CredentialUnavailableError extends CredentialError {}

/**
 * The request itself cannot be given a credential: an assumed-role session name or tag computed
 * from it is not valid (SPEC.md: "request rejected"), or a token mechanism found no usable
 * subject token in it. Answered with `status`; nothing is sent.
 */
export class CredentialRequestError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** Session name when assumeRole names none. */
export const DEFAULT_SESSION_NAME = 'switchboard';
const SESSION_NAME = /^[A-Za-z0-9+=,.@_-]{2,64}$/;
/** STS tag keys and values: letters, separators, digits and `_.:/=+-@`. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

type Headers = Record<string, string | string[]>;

export interface CredentialRequest {
  /** The Host header the request is sent with (`host` or `host:port`). */
  readonly host: string;
  readonly method: string;
  /** Path and query as sent. */
  readonly path: string;
  readonly headers: Readonly<Headers>;
  /**
   * The body as sent, or UNSIGNED_PAYLOAD when it is streamed and its hash cannot be known before
   * it is sent (SigV4 then signs `UNSIGNED-PAYLOAD` as the payload hash).
   */
  readonly body: Uint8Array | typeof UNSIGNED_PAYLOAD;
}

/** What the kind of upstream call decides for the policy. */
export interface CredentialDefaults {
  /** Where a key goes when the policy names no location (an AI provider's own header); default Authorization Bearer. */
  readonly location?: CredentialLocation;
  /** The upstream must be SigV4-signed whatever the policy says (providerG): its service and region, used when cloudA names none. */
  readonly sigv4?: { readonly service: string; readonly region: string };
  /**
   * Which headers SigV4 signs: `all` of them (requests the gateway builds itself: provider calls),
   * or only `host`, `content-type` and `x-amz-*` (proxied requests, whose other headers are the
   * client's and may be rewritten on the way without breaking the signature).
   */
  readonly signedHeaders: 'all' | 'minimal';
}

export interface PreparedCredentials {
  readonly headers: Headers;
  readonly path: string;
}

/** A Service or static backend, an MCP target: keys at Authorization Bearer, signed only under `auth.cloudA`, over host, content-type and x-amz-*. */
export const PLAIN_BACKEND: CredentialDefaults = Object.freeze({ signedHeaders: 'minimal' });

/** How a request is SigV4-signed: with which keys, for which service and region. */
interface Signing {
  readonly credentials: AwsCredentials;
  readonly service: string;
  readonly region: string;
}

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

/** Whether the auth uses a cloud mechanism (signing or a cloud token): such requests need CredentialRequest's host, method and body. */
export function usesCloudCredentials(auth: BackendAuthPolicy | undefined): boolean {
  return auth !== undefined && (auth.cloudA !== undefined || auth.cloudB !== undefined || auth.cloudC !== undefined);
}

export class BackendCredentials {
  readonly #tokens: TokenCache;
  readonly #env: NodeJS.ProcessEnv;

  constructor(opts: { tokens?: TokenCache; env?: NodeJS.ProcessEnv } = {}) {
    this.#tokens = opts.tokens ?? new TokenCache();
    this.#env = opts.env ?? process.env;
  }

  /**
   * The headers and path to send. Throws CredentialError when the configured mechanism cannot
   * produce a credential (CredentialUnavailableError when a token endpoint failed),
   * CredentialRequestError when this request cannot have one. `cel` gives the request's CEL input
   * for assumed-role expressions and token mechanisms; without it they see only the identity.
   *
   * Synchronous unless a token must be obtained (a token mechanism, cloud-B/cloud-C, an assumed
   * role): keys and SigV4 with fixed keys are most requests, and a promise per request showed in
   * the translated route's profile.
   */
  apply(req: CredentialRequest, auth: BackendAuthPolicy | undefined, identity: Readonly<RequestIdentity>, cel: (() => CelInput) | undefined, defaults: CredentialDefaults): PreparedCredentials | Promise<PreparedCredentials> {
    const mechanism = auth ? mechanismOf(auth) : undefined;
    const role = auth?.cloudA?.assumeRole;
    if (mechanism === undefined && role === undefined && auth?.cloudB === undefined && auth?.cloudC === undefined) {
      return this.#write(req, auth, undefined, undefined, identity, this.#signing(auth, mechanism, defaults), defaults);
    }
    return this.#applyWithTokens(req, auth, mechanism, identity, cel, defaults);
  }

  async #applyWithTokens(req: CredentialRequest, auth: BackendAuthPolicy | undefined, mechanism: TokenMechanism | undefined, identity: Readonly<RequestIdentity>, cel: (() => CelInput) | undefined, defaults: CredentialDefaults): Promise<PreparedCredentials> {
    let token: string | undefined;
    if (mechanism) token = await mechanismToken(mechanism, requestSource(cel, identity));
    else if (auth) token = await this.#oauthToken(auth, req.host);
    const signing = this.#signing(auth, mechanism, defaults);
    const role = auth?.cloudA?.assumeRole;
    const session = role && signing ? await this.#assumedRole(role, signing.credentials, signing.region, identity, cel) : undefined;
    return this.#write(req, auth, mechanism, token, identity, signing && session ? { ...signing, credentials: session } : signing, defaults);
  }

  /**
   * Writes the credentials once every token is at hand: `token` is the mechanism's or the cloud
   * bearer token; `signing` (with the assumed role's session keys, if any) signs last.
   */
  #write(req: CredentialRequest, auth: BackendAuthPolicy | undefined, mechanism: TokenMechanism | undefined, token: string | undefined, identity: Readonly<RequestIdentity>, signing: Signing | undefined, defaults: CredentialDefaults): PreparedCredentials {
    let written: PreparedCredentials = { headers: { ...req.headers }, path: req.path };
    if (auth && mechanism && token !== undefined) {
      const extras = applyBackendCredentials(written.headers, written.path, auth, identity);
      written = writeCredential(extras.headers, extras.path, mechanism.location, token);
    } else if (auth) {
      // A cloud bearer token always goes to Authorization Bearer (cloud-B and cloud-C read it there).
      const primary: BackendAuthPolicy = token !== undefined ? { ...auth, key: token, location: DEFAULT_CREDENTIAL_LOCATION } : { ...auth, location: auth.location ?? defaults.location ?? DEFAULT_CREDENTIAL_LOCATION };
      written = applyBackendCredentials(written.headers, written.path, primary, identity);
    }
    if (!signing) return written;
    return { headers: sign(req, written, signing, defaults.signedHeaders), path: written.path };
  }

  /** SigV4 parameters when the request must be signed: the upstream needs it or cloudA is configured, and no key or token mechanism was chosen instead. */
  #signing(auth: BackendAuthPolicy | undefined, mechanism: TokenMechanism | undefined, defaults: CredentialDefaults): Signing | undefined {
    const cloudA = auth?.cloudA;
    const required = defaults.sigv4;
    if (required === undefined && cloudA === undefined) return undefined;
    // A key or a token mechanism is the credential the operator chose: no signing on top of it.
    if ((auth?.key !== undefined || mechanism !== undefined) && cloudA === undefined) return undefined;
    const credentials = awsCredentials(cloudA?.secret, this.#env);
    if (!credentials) throw new CredentialError('no cloud-A credentials: set auth.cloudA.secretRef or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY');
    const service = cloudA?.serviceName ?? required?.service;
    const region = cloudA?.region ?? required?.region ?? this.#env.AWS_REGION;
    if (!service || !region) throw new CredentialError('cloud-A signing needs a service name (auth.cloudA.serviceName) and a region (auth.cloudA.region or AWS_REGION)');
    return { credentials, service, region };
  }

  /**
   * The session credentials of `cloudA.assumeRole`, obtained with the base keys from STS in the
   * signing region and cached per (endpoint, base key, role, session name, tags) until shortly
   * before they expire.
   */
  async #assumedRole(role: NonNullable<NonNullable<BackendAuthPolicy['cloudA']>['assumeRole']>, base: AwsCredentials, region: string, identity: Readonly<RequestIdentity>, cel: (() => CelInput) | undefined): Promise<SessionCredentials> {
    const roleArn = role.roleIdentifier;
    if (!roleArn) throw new CredentialError('cloudA.assumeRole has no roleIdentifier');
    let activation: Activation | undefined;
    const evaluate = (expression: string, what: string): string => {
      const compiled = compile(expression);
      if (!compiled.ok) throw new CredentialError(`cloudA.assumeRole ${what}: invalid CEL expression: ${compiled.error.message}`);
      activation ??= createActivation(cel ? cel() : identityCel(identity));
      const result = evalString(compiled.program, activation);
      if (!result.ok) throw new CredentialRequestError(`the request yields no ${what} for the backend's role (${result.error.message})`, 403);
      return result.value;
    };
    let sessionName = role.sessionName ?? DEFAULT_SESSION_NAME;
    if (role.sessionNameExpression !== undefined) {
      sessionName = evaluate(role.sessionNameExpression, 'session name');
      if (!SESSION_NAME.test(sessionName)) throw new CredentialRequestError('the session name computed from the request is not 2 to 64 letters, digits or +=,.@-_', 403);
    }
    const tags = (role.tags ?? []).map((tag) => {
      if (tag.expression === undefined) return { key: tag.key, value: tag.value ?? '' };
      const value = evaluate(tag.expression, `value for session tag ${JSON.stringify(tag.key)}`);
      if (value.length > 256 || !TAG_TEXT.test(value)) throw new CredentialRequestError(`the value computed from the request for session tag ${JSON.stringify(tag.key)} is not a valid tag value (at most 256 letters, digits, spaces or _.:/=+-@)`, 403);
      return { key: tag.key, value };
    });
    const endpointUrl = this.#env.AWS_ENDPOINT_URL_STS || undefined;
    const endpoint = stsEndpoint(region, endpointUrl).href;
    const key = `sts ${endpoint} ${region} ${base.accessKeyId} ${roleArn} ${sessionName} ${JSON.stringify(tags)}`;
    try {
      return await this.#tokens.get(key, () => assumeRole({ roleArn, sessionName, tags, region, ...(endpointUrl ? { endpointUrl } : {}) }, base));
    } catch (err) {
      throw new CredentialUnavailableError(`could not assume ${roleArn}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A bearer token from cloudB/cloudC, or undefined when neither is configured. */
  async #oauthToken(auth: BackendAuthPolicy, host: string): Promise<string | undefined> {
    const env = this.#env;
    const cloudC = auth.cloudC;
    if (cloudC) {
      const account = this.#serviceAccount(cloudC.secret);
      if (cloudC.type === 'IdToken') {
        // Cloud Run checks the audience against its service URL: by default the backend's own origin.
        const audience = cloudC.audience !== undefined && cloudC.audience !== '' ? cloudC.audience : `https://${host.replace(/:\d+$/, '')}`;
        if (account) return this.#fetch(`gcp-id ${account.client_email} ${account.token_uri ?? ''} ${audience}`, () => gcpIdToken(account, audience));
        return this.#fetch(`gcp-md-id ${env.GCE_METADATA_HOST ?? ''} ${audience}`, () => gcpMetadataToken('id', env, audience));
      }
      if (account) return this.#fetch(`gcp ${account.client_email} ${account.token_uri ?? ''}`, () => gcpAccessToken(account));
      return this.#fetch(`gcp-md ${env.GCE_METADATA_HOST ?? ''}`, () => gcpMetadataToken('access', env));
    }
    const cloudB = auth.cloudB;
    if (cloudB) {
      const authority = env.AZURE_AUTHORITY_HOST ? { authority: env.AZURE_AUTHORITY_HOST } : {};
      const secret = cloudB.secret;
      if (secret) {
        const client = { tenantId: secret.tenantID ?? '', clientId: secret.clientID ?? '', clientSecret: secret.clientSecret ?? '', ...authority };
        if (!client.tenantId || !client.clientId || !client.clientSecret) throw new CredentialError('the cloud-B Secret needs clientID, tenantID and clientSecret');
        return this.#fetch(`azure ${client.tenantId} ${client.clientId} ${client.authority ?? ''}`, () => azureAccessToken(client));
      }
      const managed = cloudB.managedIdentity;
      // Nothing chosen: workload identity when the cluster projected a federated token, else managed identity.
      const workload = cloudB.workloadIdentity !== undefined || (!managed && env.AZURE_FEDERATED_TOKEN_FILE !== undefined);
      if (workload) {
        const w = { tenantId: env.AZURE_TENANT_ID ?? '', clientId: env.AZURE_CLIENT_ID ?? '', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE ?? '', ...authority };
        if (!w.tenantId || !w.clientId || !w.tokenFile) throw new CredentialError('cloud-B workload identity needs AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID and AZURE_TENANT_ID');
        return this.#fetch(`azure-wi ${w.tenantId} ${w.clientId} ${w.tokenFile} ${w.authority ?? ''}`, () => azureWorkloadToken(w));
      }
      const id = { clientId: managed?.clientId ?? '', objectId: managed?.objectId ?? '', resourceId: managed?.resourceId ?? '' };
      const where = env.IDENTITY_ENDPOINT ?? env.AZURE_POD_IDENTITY_AUTHORITY_HOST ?? '';
      return this.#fetch(`azure-mi ${id.clientId} ${id.objectId} ${id.resourceId} ${where}`, () => azureManagedIdentityToken(id, env));
    }
    return undefined;
  }

  /** The Secret's service account JSON, else the ambient GOOGLE_APPLICATION_CREDENTIALS file, else undefined (metadata server). */
  #serviceAccount(secret: string | undefined): ServiceAccount | undefined {
    const file = this.#env.GOOGLE_APPLICATION_CREDENTIALS;
    if (secret === undefined && !file) return undefined;
    try {
      return parseServiceAccount(secret ?? readFileSync(file as string, 'utf8'));
    } catch (err) {
      // A bad or unreadable key file is a credential problem (a clear log), not an unreachable upstream.
      throw new CredentialError(`unusable cloud-C service account: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async #fetch(key: string, fetch: () => Promise<FetchedToken>): Promise<string> {
    try {
      return await this.#tokens.get(key, fetch);
    } catch (err) {
      throw new CredentialUnavailableError(`could not obtain an access token: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

const SIGNER_HEADERS: ReadonlySet<string> = new Set(['host', 'authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']);

/** SigV4 over the request as it will be sent; with `minimal`, only host, content-type and x-amz-* are signed. */
function sign(req: CredentialRequest, written: PreparedCredentials, signing: Signing, which: CredentialDefaults['signedHeaders']): Headers {
  const flat: Record<string, string> = {};
  const unsigned: Headers = {};
  for (const name in written.headers) {
    const value = written.headers[name];
    const lower = name.toLowerCase();
    if (which === 'minimal') {
      // The signer's own headers are never taken from the client (a client x-amz-date would set the signing time).
      if (SIGNER_HEADERS.has(lower)) continue;
      if (lower !== 'content-type' && !lower.startsWith('x-amz-')) {
        if (lower !== 'host') unsigned[name] = value;
        continue;
      }
    }
    flat[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  // S3 refuses a request without its payload hash header; other services ignore it.
  if (which === 'minimal' && req.body !== UNSIGNED_PAYLOAD) flat['x-amz-content-sha256'] = createHash('sha256').update(req.body).digest('hex');
  const signed = signSigV4({ host: req.host, method: req.method, path: written.path, headers: flat, body: req.body, service: signing.service, region: signing.region }, signing.credentials);
  return which === 'minimal' ? { ...unsigned, ...signed } : signed;
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

/**
 * A token from a backend-policy mechanism. A request that brings no usable subject token is
 * refused with the mechanism's status (401/403); a failing token endpoint is a
 * CredentialUnavailableError.
 */
async function mechanismToken(mechanism: TokenMechanism, source: CredentialSource): Promise<string> {
  try {
    return await mechanism.token(source);
  } catch (err) {
    if (err instanceof TokenExchangeRejection) throw new CredentialRequestError(err.message, err.status);
    throw new CredentialUnavailableError(`backend auth ${mechanism.kind}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** What assumed-role expressions see when the caller gave no request CEL input: the identity. */
function identityCel(id: Readonly<RequestIdentity>): CelInput {
  return compactInput({ jwt: id.jwt?.claims, apiKey: id.apiKey, basicAuth: id.basicAuth, extauthz: id.extauthz, extproc: id.extproc });
}

function compactInput(input: CelInput): CelInput {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as CelInput;
}
