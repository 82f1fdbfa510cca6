/**
 * The two OAuth flows cloud LLM providers need, done with jose + undici instead of the vendors'
 * heavy SDKs: a cloud-C (Google) service account's signed-JWT grant, and cloud-B (Microsoft
 * Entra) client credentials.
 */
import { importPKCS8, SignJWT } from 'jose';
import { request } from 'undici';
import type { FetchedToken } from './token-cache.ts';

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

async function postForm(url: string, form: Record<string, string>): Promise<FetchedToken> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`token endpoint answered ${res.statusCode}`);
  const parsed = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown };
  if (typeof parsed.access_token !== 'string') throw new Error('token endpoint returned no access_token');
  const expires = Number(parsed.expires_in);
  return { token: parsed.access_token, expiresInS: Number.isFinite(expires) && expires > 0 ? expires : 3600 };
}
