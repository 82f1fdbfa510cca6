/**
 * Backend auth `oauthTokenExchange`: trades the client's token at an OAuth token endpoint for one
 * the backend accepts — RFC 8693 token exchange (default) or the RFC 7523 JWT bearer grant — with
 * the configured client authentication, and caches results per subject/actor/parameters.
 */
import { createHash, createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { request } from 'undici';
import { compile, createActivation, evalString } from '../../cel/index.ts';
import type { CredentialLocation, JsonObject } from '../../ir/policy.ts';
import { ExpiringLru } from '../policies/credentials/expiring-lru.ts';
import { compileCredentialExtractor, type CredentialExtractor } from '../policies/credentials/location.ts';
import type { PolicyContext } from '../policies/context.ts';
import { DEFAULT_CREDENTIAL_LOCATION } from './auth.ts';

const TOKEN_TYPES: Readonly<Record<string, string>> = {
  AccessToken: 'urn:ietf:params:oauth:token-type:access_token',
  Jwt: 'urn:ietf:params:oauth:token-type:jwt',
  IdToken: 'urn:ietf:params:oauth:token-type:id_token',
  IdJag: 'urn:ietf:params:oauth:token-type:id-jag',
};
const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const GRANT_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** SPEC.md OAuthTokenCache defaults. */
const DEFAULT_MAX_ENTRIES = 8192;
const DEFAULT_TTL_MS = 300_000;
const ENDPOINT_TIMEOUT_MS = 10_000;
const ASSERTION_TTL_S = 60;

/** A request the exchange cannot serve (no subject token, may_act not satisfied): answered with `status`. */
export class TokenExchangeRejection extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface TokenExchanger {
  /** Where the exchanged token goes (default Authorization: Bearer). */
  readonly location: CredentialLocation;
  exchange(ctx: PolicyContext): Promise<string>;
}

interface TokenSource {
  readonly extract: CredentialExtractor;
  readonly type: string;
}

type ClientAuth = (form: URLSearchParams, headers: Record<string, string>) => Promise<void>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const obj = (v: unknown): JsonObject | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined);

function tokenType(value: unknown, fallback: string): string {
  const t = str(value) ?? fallback;
  if (TOKEN_TYPES[t]) return TOKEN_TYPES[t];
  if (!/^[a-z][a-z0-9+.-]*:/i.test(t)) throw new Error(`oauthTokenExchange: token type ${t} is neither a built-in nor an absolute URI`);
  return t;
}

function tokenSource(spec: JsonObject | undefined, defaultType: string, what: string): TokenSource {
  const location = (obj(spec?.source) as CredentialLocation | undefined) ?? DEFAULT_CREDENTIAL_LOCATION;
  return { extract: compileCredentialExtractor(location, what), type: tokenType(spec?.tokenType, defaultType) };
}

/** Compiled at config time; throws on what cannot work (missing endpoint, bad key, bad CEL). */
export function compileTokenExchange(spec: JsonObject): TokenExchanger {
  const url = str(spec.url);
  if (!url) throw new Error(spec.backendKey !== undefined ? 'oauthTokenExchange: backendRef endpoints are not supported yet; use url' : 'oauthTokenExchange needs url');
  const endpoint = new URL((str(spec.path) ?? '/').replace(/^\//, ''), url.endsWith('/') ? url : `${url}/`).toString();
  const jwtBearer = spec.grantType === 'JwtBearer';
  const subject = tokenSource(obj(spec.subjectToken), 'AccessToken', 'oauthTokenExchange.subjectToken');
  const actorSpec = obj(spec.actorToken);
  const actor = actorSpec ? tokenSource(actorSpec, 'AccessToken', 'oauthTokenExchange.actorToken') : undefined;
  const mayActRequired = actorSpec?.mayAct === 'Required';
  const requested = spec.requestedTokenType !== undefined ? tokenType(spec.requestedTokenType, 'AccessToken') : undefined;
  const additional = Object.entries(obj(spec.additionalParams) ?? {}).map(([name, expression]) => {
    const r = compile(String(expression));
    if (!r.ok) throw new Error(`oauthTokenExchange.additionalParams.${name}: invalid CEL expression: ${r.error.message}`);
    return { name, program: r.program };
  });
  const clientAuth = compileClientAuth(obj(spec.clientAuth));
  const cacheSpec = obj(obj(spec.cache)?.inMemory);
  const maxEntries = typeof cacheSpec?.maxEntries === 'number' ? cacheSpec.maxEntries : DEFAULT_MAX_ENTRIES;
  const defaultTtlMs = typeof cacheSpec?.defaultTtlMs === 'number' ? cacheSpec.defaultTtlMs : DEFAULT_TTL_MS;
  const cache = new ExpiringLru<string>(maxEntries);
  const pending = new Map<string, Promise<string>>();

  const fetchToken = async (form: URLSearchParams): Promise<{ token: string; ttlMs: number }> => {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    await clientAuth(form, headers);
    const res = await request(endpoint, { method: 'POST', headers, body: form.toString(), headersTimeout: ENDPOINT_TIMEOUT_MS, bodyTimeout: ENDPOINT_TIMEOUT_MS });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`token endpoint answered ${res.statusCode}`);
    const body = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new Error('token endpoint answered without access_token');
    const ttlMs = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : defaultTtlMs;
    return { token: body.access_token, ttlMs };
  };

  return {
    location: (obj(spec.location) as CredentialLocation | undefined) ?? DEFAULT_CREDENTIAL_LOCATION,
    async exchange(ctx) {
      const subjectToken = subject.extract(ctx);
      if (!subjectToken) throw new TokenExchangeRejection(401, 'no subject token to exchange');
      const actorToken = actor?.extract(ctx);
      if (actor && mayActRequired && (!actorToken || !mayAct(subjectToken, actorToken))) throw new TokenExchangeRejection(403, 'the subject token does not authorize this actor (may_act)');
      const form = new URLSearchParams();
      if (jwtBearer) {
        form.set('grant_type', GRANT_JWT_BEARER);
        form.set('assertion', subjectToken);
      } else {
        form.set('grant_type', GRANT_TOKEN_EXCHANGE);
        form.set('subject_token', subjectToken);
        form.set('subject_token_type', subject.type);
        if (actor && actorToken) {
          form.set('actor_token', actorToken);
          form.set('actor_token_type', actor.type);
        }
        if (requested) form.set('requested_token_type', requested);
        for (const a of strings(spec.audiences)) form.append('audience', a);
        for (const r of strings(spec.resources)) form.append('resource', r);
      }
      const scopes = strings(spec.scopes);
      if (scopes.length > 0) form.set('scope', scopes.join(' '));
      if (additional.length > 0) {
        const activation = createActivation(ctx.cel());
        for (const { name, program } of additional) {
          // A parameter whose expression fails is left out; the token endpoint decides without it.
          const value = evalString(program, activation);
          if (value.ok) form.set(name, value.value);
        }
      }
      const key = createHash('sha256').update(form.toString()).digest('hex');
      const cached = cache.get(key);
      if (cached) return cached;
      let inFlight = pending.get(key);
      if (!inFlight) {
        inFlight = fetchToken(form).then(({ token, ttlMs }) => {
          cache.set(key, token, Date.now() + ttlMs);
          return token;
        }).finally(() => pending.delete(key));
        pending.set(key, inFlight);
      }
      return inFlight;
    },
  };
}

/** RFC 8693 §4.4: the subject's may_act claim must name the actor (sub, and iss when given). */
function mayAct(subjectToken: string, actorToken: string): boolean {
  try {
    const claim = decodeJwt(subjectToken).may_act as { sub?: unknown; iss?: unknown } | undefined;
    const actor = decodeJwt(actorToken);
    if (!claim || claim.sub === undefined || claim.sub !== actor.sub) return false;
    return claim.iss === undefined || claim.iss === actor.iss;
  } catch {
    return false;
  }
}

function compileClientAuth(spec: JsonObject | undefined): ClientAuth {
  if (!spec) return () => Promise.resolve();
  const clientId = str(spec.clientId);
  if (!clientId) throw new Error('oauthTokenExchange.clientAuth needs clientId');
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
    if (!secret) throw new Error('oauthTokenExchange.clientAuth: ClientSecretBasic needs secretRef');
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
    return (_form, headers) => {
      headers.authorization = `Basic ${basic}`;
      return Promise.resolve();
    };
  }
  if (method !== 'PrivateKeyJwt') throw new Error(`oauthTokenExchange.clientAuth: unknown method ${method}`);
  const pk = obj(spec.privateKeyJwt);
  const pem = str(pk?.signingKey);
  const audience = str(pk?.assertionAudience);
  if (!pem || !audience) throw new Error('oauthTokenExchange.clientAuth: PrivateKeyJwt needs privateKeyJwt.signingKeyRef and assertionAudience');
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`oauthTokenExchange.clientAuth: the signing key does not parse: ${(err as Error).message}`, { cause: err });
  }
  const alg = str(pk?.alg) ?? 'RS256';
  const kid = str(pk?.kid);
  const x5c = certificateHeader(pk);
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
function certificateHeader(pk: JsonObject | undefined): Record<string, unknown> {
  const pem = str(pk?.certificate);
  const header = str(pk?.certificateHeader);
  if (!pem || !header) return {};
  const ders = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/g)].map((m) => m[1].replace(/\s+/g, ''));
  if (ders.length === 0) throw new Error('oauthTokenExchange.clientAuth.privateKeyJwt.certificateRef holds no PEM certificate');
  if (header === 'x5c') return { x5c: ders };
  return { 'x5t#S256': createHash('sha256').update(Buffer.from(ders[0], 'base64')).digest('base64url') };
}
