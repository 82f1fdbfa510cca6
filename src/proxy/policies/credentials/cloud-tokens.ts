/**
 * The token flows cloud-B and cloud-C backends need (AI providers, Service backends, MCP targets
 * alike), done with jose + undici instead of the vendors' heavy SDKs: cloud-C (Google) access and ID tokens from a service account's signed-JWT grant or the
 * metadata server; cloud-B (Microsoft Entra) client credentials with a secret or a federated
 * (workload identity) assertion, and managed identity (IMDS or App Service).
 */
import { readFileSync } from 'node:fs';
import { decodeJwt, importPKCS8, SignJWT } from 'jose';
import { request } from 'undici';
import type { FetchedToken } from './token-cache.ts';
import { readTextBounded } from '../../http/body.ts';

/** Token endpoints (OAuth, STS, metadata servers) answer a few KB; anything past this is refused (docs/security.md). */
export const MAX_TOKEN_RESPONSE_BYTES = 1024 * 1024;

export const GCP_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const GCP_TOKEN_URI = 'https://oauth2.googleapis.com/token';
export const AZURE_AUTHORITY = 'https://login.microsoftonline.com';
export const AZURE_COGNITIVE_SCOPE = 'https://cognitiveservices.azure.com/.default';

export interface ServiceAccount {
  readonly client_email: string;
  readonly private_key: string;
  readonly token_uri?: string;
  readonly private_key_id?: string;
}

export function parseServiceAccount(json: string): ServiceAccount {
  const parsed = JSON.parse(json) as Partial<ServiceAccount>;
  if (typeof parsed.client_email !== 'string' || typeof parsed.private_key !== 'string') throw new Error('service account credentials need client_email and private_key');
  return parsed as ServiceAccount;
}

/** RFC 7523 jwt-bearer grant: a JWT signed with the service account key, exchanged at its token_uri. */
export async function gcpAccessToken(account: ServiceAccount, now = Date.now()): Promise<FetchedToken> {
  const tokenUri = account.token_uri ?? GCP_TOKEN_URI;
  const key = await importPKCS8(account.private_key, 'RS256');
  const iat = Math.floor(now / 1000);
  const assertion = await new SignJWT({ scope: GCP_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
    .setIssuer(account.client_email)
    .setAudience(tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .sign(key);
  return postForm(tokenUri, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
}

export interface AzureClient {
  readonly tenantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Default https://login.microsoftonline.com (AZURE_AUTHORITY_HOST overrides it, as Azure's SDKs do). */
  readonly authority?: string;
}

export function azureAccessToken(client: AzureClient, scope = AZURE_COGNITIVE_SCOPE): Promise<FetchedToken> {
  const authority = (client.authority ?? AZURE_AUTHORITY).replace(/\/+$/, '');
  return postForm(`${authority}/${encodeURIComponent(client.tenantId)}/oauth2/v2.0/token`, {
    grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope,
  });
}

export interface AzureWorkload {
  readonly tenantId: string;
  readonly clientId: string;
  /** The projected service-account token (AZURE_FEDERATED_TOKEN_FILE); read on every fetch, it rotates. */
  readonly tokenFile: string;
  readonly authority?: string;
}

/** Workload identity: the federated token file as a client assertion in an Entra client-credentials grant. */
export function azureWorkloadToken(w: AzureWorkload, scope = AZURE_COGNITIVE_SCOPE): Promise<FetchedToken> {
  const authority = (w.authority ?? AZURE_AUTHORITY).replace(/\/+$/, '');
  const assertion = readFileSync(w.tokenFile, 'utf8').trim();
  return postForm(`${authority}/${encodeURIComponent(w.tenantId)}/oauth2/v2.0/token`, {
    grant_type: 'client_credentials', client_id: w.clientId, scope,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion,
  });
}

export const AZURE_COGNITIVE_RESOURCE = 'https://cognitiveservices.azure.com';
export const AZURE_IMDS_HOST = 'http://169.254.169.254';

/** A user-assigned identity by one of its ids; none: the system-assigned identity. */
export interface ManagedIdentity {
  readonly clientId?: string;
  readonly objectId?: string;
  readonly resourceId?: string;
}

/**
 * Managed identity as Azure's SDKs find it: App Service / Functions / Container Apps when
 * IDENTITY_ENDPOINT and IDENTITY_HEADER are set (api-version 2019-08-01, `X-IDENTITY-HEADER`),
 * else the VM/AKS instance metadata service (IMDS, api-version 2018-02-01, `Metadata: true`) at
 * AZURE_POD_IDENTITY_AUTHORITY_HOST or 169.254.169.254. Only the first id given is sent.
 */
export async function azureManagedIdentityToken(id: ManagedIdentity, env: NodeJS.ProcessEnv, resource = AZURE_COGNITIVE_RESOURCE, now = Date.now()): Promise<FetchedToken> {
  const appService = env.IDENTITY_ENDPOINT && env.IDENTITY_HEADER;
  const url = appService ? new URL(env.IDENTITY_ENDPOINT as string) : new URL('/metadata/identity/oauth2/token', env.AZURE_POD_IDENTITY_AUTHORITY_HOST ?? AZURE_IMDS_HOST);
  url.searchParams.set('api-version', appService ? '2019-08-01' : '2018-02-01');
  url.searchParams.set('resource', resource);
  const names = appService ? { clientId: 'client_id', objectId: 'principal_id', resourceId: 'mi_res_id' } : { clientId: 'client_id', objectId: 'object_id', resourceId: 'msi_res_id' };
  const chosen = (['clientId', 'objectId', 'resourceId'] as const).find((k) => id[k]);
  if (chosen) url.searchParams.set(names[chosen], id[chosen] as string);
  const headers: Record<string, string> = appService ? { 'x-identity-header': env.IDENTITY_HEADER as string } : { metadata: 'true' };
  const body = await getJson(url, headers);
  if (typeof body.access_token !== 'string') throw new Error('managed identity endpoint returned no access_token');
  // IMDS says expires_in (seconds, as a string); App Service only expires_on (epoch seconds).
  const expiresIn = Number(body.expires_in);
  const expiresOn = Number(body.expires_on);
  const lifetime = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : Number.isFinite(expiresOn) ? expiresOn - Math.floor(now / 1000) : 0;
  return { token: body.access_token, expiresInS: lifetime > 0 ? lifetime : 3600 };
}

export const GCE_METADATA_HOST = 'metadata.google.internal';

/**
 * The GCE/Cloud Run/GKE metadata server (GCE_METADATA_HOST overrides the host, as Google's
 * libraries do): an access token of the attached service account, or an ID token for `audience`.
 */
export async function gcpMetadataToken(kind: 'access' | 'id', env: NodeJS.ProcessEnv, audience = '', now = Date.now()): Promise<FetchedToken> {
  const base = `http://${env.GCE_METADATA_HOST ?? GCE_METADATA_HOST}/computeMetadata/v1/instance/service-accounts/default/`;
  const headers = { 'metadata-flavor': 'Google' };
  if (kind === 'access') {
    const body = await getJson(new URL('token', base), headers);
    if (typeof body.access_token !== 'string') throw new Error('metadata server returned no access_token');
    const expires = Number(body.expires_in);
    return { token: body.access_token, expiresInS: Number.isFinite(expires) && expires > 0 ? expires : 3600 };
  }
  const url = new URL('identity', base);
  url.searchParams.set('audience', audience);
  url.searchParams.set('format', 'full');
  const token = (await get(url, headers)).trim();
  return { token, expiresInS: jwtLifetime(token, now) };
}

/** A service account's ID token for `audience`: a JWT with `target_audience`, exchanged at token_uri for an `id_token`. */
export async function gcpIdToken(account: ServiceAccount, audience: string, now = Date.now()): Promise<FetchedToken> {
  const tokenUri = account.token_uri ?? GCP_TOKEN_URI;
  const key = await importPKCS8(account.private_key, 'RS256');
  const iat = Math.floor(now / 1000);
  const assertion = await new SignJWT({ target_audience: audience })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) })
    .setIssuer(account.client_email)
    .setSubject(account.client_email)
    .setAudience(tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .sign(key);
  const body = await post(tokenUri, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
  if (typeof body.id_token !== 'string') throw new Error('token endpoint returned no id_token');
  return { token: body.id_token, expiresInS: jwtLifetime(body.id_token, now) };
}

/** Seconds until a JWT's `exp`; an hour when it has none or cannot be read. */
function jwtLifetime(token: string, now: number): number {
  try {
    const exp = decodeJwt(token).exp;
    if (typeof exp === 'number' && exp * 1000 > now) return exp - Math.floor(now / 1000);
  } catch {
    // Not a JWT: the issuer's default lifetime.
  }
  return 3600;
}

async function postForm(url: string, form: Record<string, string>): Promise<FetchedToken> {
  const parsed = await post(url, form);
  if (typeof parsed.access_token !== 'string') throw new Error('token endpoint returned no access_token');
  const expires = Number(parsed.expires_in);
  return { token: parsed.access_token, expiresInS: Number.isFinite(expires) && expires > 0 ? expires : 3600 };
}

async function post(url: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await readTextBounded(res.body, MAX_TOKEN_RESPONSE_BYTES, { what: 'token endpoint answer' });
  if (res.statusCode >= 300) throw new Error(`token endpoint answered ${res.statusCode}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function get(url: URL, headers: Record<string, string>): Promise<string> {
  const res = await request(url, { method: 'GET', headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await readTextBounded(res.body, MAX_TOKEN_RESPONSE_BYTES, { what: 'token endpoint answer' });
  if (res.statusCode >= 300) throw new Error(`${url.origin}${url.pathname} answered ${res.statusCode}`);
  return text;
}

async function getJson(url: URL, headers: Record<string, string>): Promise<Record<string, unknown>> {
  return JSON.parse(await get(url, { ...headers, accept: 'application/json' })) as Record<string, unknown>;
}
