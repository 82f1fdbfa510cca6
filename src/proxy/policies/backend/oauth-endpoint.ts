/**
 * What the OAuth-based backend auth mechanisms share (`oauthTokenExchange`, `crossAppAccess`): the
 * token endpoint (`url` + `path`), client authentication (OAuthClientAuth), the token request and
 * its answer, token sources in the client request (OAuthTokenSpec), token type names, and the
 * in-memory token cache (OAuthTokenCache) with one fetch per key at a time.
 */
import { createHash, createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { request, type Dispatcher } from 'undici';
import type {
  OAuthClientAuthPolicy, OAuthPrivateKeyJwtPolicy, OAuthTokenCachePolicy, OAuthTokenEndpointPolicy, OAuthTokenSpecPolicy,
} from '../../../ir/policy.ts';
import { ExpiringLru } from '../credentials/expiring-lru.ts';
import { compileCredentialExtractor, type CredentialExtractor } from '../credentials/location.ts';
import { TargetAgents } from '../../ext/connections.ts';
import { baseUrl, type ServiceTargets } from '../../ext/endpoint.ts';
import { DEFAULT_CREDENTIAL_LOCATION } from './auth.ts';
import { liveTargets } from './service-targets.ts';

export type { CredentialSource } from '../credentials/location.ts';

export const TOKEN_TYPES: Readonly<Record<string, string>> = {
  AccessToken: 'urn:ietf:params:oauth:token-type:access_token',
  Jwt: 'urn:ietf:params:oauth:token-type:jwt',
  IdToken: 'urn:ietf:params:oauth:token-type:id_token',
  IdJag: 'urn:ietf:params:oauth:token-type:id-jag',
};
export const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const GRANT_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** SPEC.md OAuthTokenCache defaults. */
const DEFAULT_MAX_ENTRIES = 8192;
const DEFAULT_TTL_MS = 300_000;
const ENDPOINT_TIMEOUT_MS = 10_000;
const ASSERTION_TTL_S = 60;
/** A cached token is not used during the last tenth of its lifetime, at most this long. */
const EXPIRY_MARGIN_MS = 30_000;

/** The request cannot be given a token (no subject token, may_act not satisfied): answered with `status`. */
export class TokenExchangeRejection extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** A token endpoint failed (unreachable, an error status, an answer without a token): the gateway has no credential to send. */
export class TokenEndpointError extends Error {}

/** A non-empty string, else undefined (an empty IR string means unset, as the API's minimum lengths imply). */
export const str = (v: string | undefined): string | undefined => (v !== undefined && v !== '' ? v : undefined);
/** A token endpoint's JSON answer as an object (untrusted: read field by field). */
const jsonObject = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** A built-in token type name as its URN; any other value must be an absolute URI (passed through). */
export function tokenType(value: string | undefined, fallback: string, what: string): string {
  const t = str(value) ?? fallback;
  if (TOKEN_TYPES[t]) return TOKEN_TYPES[t];
  if (!/^[a-z][a-z0-9+.-]*:/i.test(t)) throw new Error(`${what}: token type ${t} is neither a built-in nor an absolute URI`);
  return t;
}

export interface TokenSource {
  readonly extract: CredentialExtractor;
  /** The token type URN sent with it. */
  readonly type: string;
}

/** OAuthTokenSpec: where the token is in the client request (default Authorization Bearer) and its type. */
export function tokenSource(spec: OAuthTokenSpecPolicy | undefined, defaultType: string, what: string): TokenSource {
  const location = spec?.source ?? DEFAULT_CREDENTIAL_LOCATION;
  return { extract: compileCredentialExtractor(location, what), type: tokenType(spec?.tokenType, defaultType, what) };
}

/** Adds client authentication to a token request's form and headers. */
export type ClientAuth = (form: URLSearchParams, headers: Record<string, string>) => Promise<void>;

/** One token endpoint: where it is and how the gateway authenticates to it. */
export interface TokenEndpoint {
  /** The endpoint as written (its URL, or `backend <key>` and the path), for messages. */
  readonly url: string;
  /** Where the next request goes: the URL, or the next ready endpoint of the backend (with its TLS pool). */
  readonly target: () => { readonly url: string; readonly dispatcher?: Dispatcher };
  readonly clientAuth: ClientAuth;
}

export interface IssuedToken {
  readonly token: string;
  /** From `expires_in`, else the cache's default TTL. */
  readonly ttlMs: number;
  readonly issuedTokenType: string | undefined;
}

/**
 * A PolicyBackendEndpoint with `path` (default '/') and `clientAuth`, compiled at config time. A
 * `backendRef` is its backend's ready endpoints, round robin per request, with the TLS of the
 * backend policies attached to it, as the newest config says (the mechanism holding this is kept
 * with its auth object across config versions: service-targets.ts).
 */
export function compileTokenEndpoint(spec: OAuthTokenEndpointPolicy, clientAuth: OAuthClientAuthPolicy | undefined, what: string): TokenEndpoint {
  const path = str(spec.path) ?? '/';
  const auth = compileClientAuth(clientAuth, `${what}.clientAuth`);
  if (spec.backendKey !== undefined) {
    let targets: ServiceTargets;
    try {
      targets = liveTargets(spec.backendKey);
    } catch (err) {
      throw new Error(`${what}: ${(err as Error).message}`, { cause: err });
    }
    const agents = new TargetAgents([]);
    const target = () => {
      const t = targets.next();
      return { url: joinPath(baseUrl({ ...t, pathPrefix: undefined }), path), dispatcher: agents.get(t) };
    };
    return { url: `backend ${spec.backendKey}${path}`, target, clientAuth: auth };
  }
  const url = str(spec.url);
  if (!url) throw new Error(`${what} needs a backendRef or url`);
  const endpoint = joinPath(url, path);
  return { url: endpoint, target: () => ({ url: endpoint }), clientAuth: auth };
}

/** `path` under `base` (RFC 3986 resolution against `base` with a trailing slash). */
function joinPath(base: string, path: string): string {
  return new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`).toString();
}

/**
 * POSTs one token request (client authentication added) and reads the token from `access_token`
 * (RFC 6749 §5.1; RFC 8693 §2.2.1 uses it for every issued token type). Anything else is a
 * TokenEndpointError naming the endpoint's status and OAuth error code.
 */
export async function requestToken(endpoint: TokenEndpoint, form: URLSearchParams, defaultTtlMs: number): Promise<IssuedToken> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  await endpoint.clientAuth(form, headers);
  let status: number;
  let text: string;
  try {
    const target = endpoint.target();
    const res = await request(target.url, { ...(target.dispatcher ? { dispatcher: target.dispatcher } : {}), method: 'POST', headers, body: form.toString(), headersTimeout: ENDPOINT_TIMEOUT_MS, bodyTimeout: ENDPOINT_TIMEOUT_MS });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    throw new TokenEndpointError(`token endpoint ${endpoint.url} unreachable: ${(err as Error).message}`, { cause: err });
  }
  let body: Record<string, unknown> | undefined;
  try {
    body = jsonObject(JSON.parse(text));
  } catch {
    body = undefined;
  }
  if (status !== 200) {
    const code = typeof body?.error === 'string' ? ` (${body.error})` : '';
    throw new TokenEndpointError(`token endpoint ${endpoint.url} answered ${status}${code}`);
  }
  const token = body?.access_token;
  if (typeof token !== 'string' || token === '') throw new TokenEndpointError(`token endpoint ${endpoint.url} answered without access_token`);
  const expiresIn = Number(body?.expires_in);
  return {
    token,
    ttlMs: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : defaultTtlMs,
    issuedTokenType: typeof body?.issued_token_type === 'string' ? body.issued_token_type : undefined,
  };
}

/**
 * OAuthTokenCache: tokens per key until shortly before they expire (`maxEntries` 0 disables caching), and one
 * fetch at a time per key — concurrent requests for the same subject share it.
 */
export class OAuthTokenCache {
  readonly defaultTtlMs: number;
  readonly #entries: ExpiringLru<string>;
  readonly #pending = new Map<string, Promise<string>>();

  constructor(spec: OAuthTokenCachePolicy | undefined) {
    const inMemory = spec?.inMemory;
    this.defaultTtlMs = typeof inMemory?.defaultTtlMs === 'number' && inMemory.defaultTtlMs > 0 ? inMemory.defaultTtlMs : DEFAULT_TTL_MS;
    this.#entries = new ExpiringLru<string>(typeof inMemory?.maxEntries === 'number' ? inMemory.maxEntries : DEFAULT_MAX_ENTRIES);
  }

  /** The cache key for these parts (hashed: keys hold client tokens). */
  static key(...parts: readonly string[]): string {
    const hash = createHash('sha256');
    for (const p of parts) hash.update(p).update('\u0000');
    return hash.digest('hex');
  }

  get(key: string, fetch: () => Promise<{ token: string; ttlMs: number }>): Promise<string> {
    const cached = this.#entries.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    let inFlight = this.#pending.get(key);
    if (!inFlight) {
      const requestedAt = Date.now();
      inFlight = fetch().then(({ token, ttlMs }) => {
        // Counted from the request (the issuer started the lifetime before we had the answer), and
        // dropped a little early so a token never expires on its way to the backend.
        this.#entries.set(key, token, requestedAt + ttlMs - Math.min(EXPIRY_MARGIN_MS, ttlMs / 10));
        return token;
      }).finally(() => this.#pending.delete(key));
      this.#pending.set(key, inFlight);
    }
    return inFlight;
  }
}

/** OAuthClientAuth: ClientSecretBasic (default), ClientSecretPost, or PrivateKeyJwt (RFC 7523 §2.2); none when unset. */
export function compileClientAuth(spec: OAuthClientAuthPolicy | undefined, what: string): ClientAuth {
  if (!spec) return () => Promise.resolve();
  const clientId = str(spec.clientId);
  if (!clientId) throw new Error(`${what} needs clientId`);
  const secret = str(spec.secret);
  const method = str(spec.method) ?? 'ClientSecretBasic';
  if (method === 'ClientSecretPost') {
    return (form) => {
      form.set('client_id', clientId);
      if (secret) form.set('client_secret', secret);
      return Promise.resolve();
    };
  }
  if (method === 'ClientSecretBasic') {
    if (!secret) throw new Error(`${what}: ClientSecretBasic needs secretRef`);
    // RFC 6749 §2.3.1: both parts form-urlencoded before the Basic encoding.
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
    return (_form, headers) => {
      headers.authorization = `Basic ${basic}`;
      return Promise.resolve();
    };
  }
  if (method !== 'PrivateKeyJwt') throw new Error(`${what}: unknown method ${method}`);
  const pk = spec.privateKeyJwt;
  const pem = str(pk?.signingKey);
  const audience = str(pk?.assertionAudience);
  if (!pem || !audience) throw new Error(`${what}: PrivateKeyJwt needs privateKeyJwt.signingKeyRef and assertionAudience`);
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`${what}: the signing key does not parse: ${(err as Error).message}`, { cause: err });
  }
  const alg = str(pk?.alg) ?? 'RS256';
  const kid = str(pk?.kid);
  const x5c = certificateHeader(pk, what);
  return async (form) => {
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg, typ: 'JWT', ...(kid ? { kid } : {}), ...x5c })
      .setIssuer(clientId).setSubject(clientId).setAudience(audience).setJti(randomUUID())
      .setIssuedAt(now).setExpirationTime(now + ASSERTION_TTL_S)
      .sign(key);
    form.set('client_id', clientId);
    form.set('client_assertion_type', CLIENT_ASSERTION_TYPE);
    form.set('client_assertion', assertion);
  };
}

/** `x5c` (the chain, base64 DER) or `x5t#S256` (the leaf's SHA-256 thumbprint) from certificateRef. */
function certificateHeader(pk: OAuthPrivateKeyJwtPolicy | undefined, what: string): Record<string, unknown> {
  const pem = str(pk?.certificate);
  const header = str(pk?.certificateHeader);
  if (!pem || !header) return {};
  const ders = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/g)].map((m) => m[1].replace(/\s+/g, ''));
  if (ders.length === 0) throw new Error(`${what}.privateKeyJwt.certificateRef holds no PEM certificate`);
  if (header === 'x5c') return { x5c: ders };
  return { 'x5t#S256': createHash('sha256').update(Buffer.from(ders[0], 'base64')).digest('base64url') };
}
