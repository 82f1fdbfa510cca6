import { request } from 'undici';
import { BodyTooLargeError, readBodyBounded, readTextBounded } from '../../http/body.ts';
import type { DirectResponse } from '../../policies/result.ts';
import type { McpOAuthResource } from '../../policies/traffic/jwt-authentication/oauth-resource/resource.ts';

/**
 * The token endpoint the gateway publishes when `clientSecretRef` is set (`POST
 * /.well-known/oauth-token<path>`): the MCP client sends its token request as a public client, the
 * gateway adds the confidential client's credentials and forwards it to the IdP's own token
 * endpoint, and hands the IdP's answer back unchanged.
 *
 * Only grants that prove a user already consented are proxied (`authorization_code`, with the
 * client's PKCE verifier, and `refresh_token`); anything else (client_credentials, password,
 * token exchange …) would let any caller mint tokens as the confidential client, so it is refused.
 * The secret is never logged: logs carry the status and the IdP's error code only.
 */
const PROXIED_GRANTS: ReadonlySet<string> = new Set(['authorization_code', 'refresh_token']);
const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_RESPONSE_BYTES = 1024 * 1024;
const TIMEOUT_MS = 10_000;
/** Client credentials a caller may try to bring; the gateway's own replace them. */
const CLIENT_AUTH_FIELDS = ['client_secret', 'client_assertion', 'client_assertion_type'];

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache', 'access-control-allow-origin': '*' } as const;
const oauthError = (status: number, error: string, description: string): DirectResponse => ({ status, headers: HEADERS, body: JSON.stringify({ error, error_description: description }) });

/** RFC 6749 §2.3.1: both parts form-encoded, then Basic. */
function basicCredentials(clientId: string, secret: string): string {
  const encode = (s: string): string => new URLSearchParams({ s }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

async function readForm(req: AsyncIterable<Buffer>): Promise<URLSearchParams | DirectResponse> {
  try {
    return new URLSearchParams(await readTextBounded(req, MAX_REQUEST_BYTES, { destroy: false }));
  } catch (error) {
    if (error instanceof BodyTooLargeError) return oauthError(413, 'invalid_request', `token request larger than ${MAX_REQUEST_BYTES} bytes`);
    throw error;
  }
}

/** Answers one token request; `contentType` is the request's header, `body` its stream. */
export async function proxyTokenRequest(resource: McpOAuthResource, contentType: unknown, body: AsyncIterable<Buffer>): Promise<DirectResponse> {
  const logger = resource.logger;
  const { clientId, clientSecret } = resource.config;
  if (clientId === undefined || clientSecret === undefined) return oauthError(404, 'not_found', 'no clientSecretRef is configured for this resource');
  const mediaType = typeof contentType === 'string' ? contentType.split(';')[0].trim().toLowerCase() : '';
  if (mediaType !== 'application/x-www-form-urlencoded') return oauthError(400, 'invalid_request', 'the token request must be application/x-www-form-urlencoded');
  const form = await readForm(body);
  if (!(form instanceof URLSearchParams)) return form;
  const grant = form.get('grant_type') ?? '';
  if (!PROXIED_GRANTS.has(grant)) return oauthError(400, 'unsupported_grant_type', 'only authorization_code and refresh_token are accepted here');
  const asked = form.get('client_id');
  if (asked !== null && asked !== clientId) return oauthError(401, 'invalid_client', 'unknown client_id');

  const endpoint = await resource.idpTokenEndpoint().catch(() => undefined);
  if (!endpoint) return oauthError(502, 'temporarily_unavailable', 'the identity provider did not publish a token endpoint');
  for (const field of CLIENT_AUTH_FIELDS) form.delete(field);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (endpoint.basic) {
    form.delete('client_id');
    headers.authorization = basicCredentials(clientId, clientSecret);
  } else {
    form.set('client_id', clientId);
    form.set('client_secret', clientSecret);
  }

  try {
    const res = await request(endpoint.url, { method: 'POST', headers, body: form.toString(), headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
    const answer = await readBodyBounded(res.body, MAX_RESPONSE_BYTES, { what: 'token response' });
    if (res.statusCode >= 400) logger.info({ status: res.statusCode, error: errorCodeOf(answer), grant }, 'MCP OAuth: the identity provider refused a proxied token request');
    const type = res.headers['content-type'];
    return { status: res.statusCode, headers: { ...HEADERS, 'content-type': typeof type === 'string' ? type : 'application/json' }, body: answer };
  } catch (error) {
    logger.warn({ error: (error as Error).message, grant }, 'MCP OAuth: token request to the identity provider failed');
    return oauthError(502, 'temporarily_unavailable', 'the identity provider did not answer the token request');
  }
}

/** The RFC 6749 `error` code of an IdP's answer, for logs (never the whole body). */
function errorCodeOf(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string' ? (parsed as { error: string }).error.slice(0, 100) : undefined;
  } catch {
    return undefined;
  }
}
