import { BodyTooLargeError, readTextBounded } from '../../http/body.ts';
import type { DirectResponse } from '../../policies/result.ts';
import type { TrafficStep } from '../../policies/step.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import type { OAuthDocument } from '../../policies/traffic/jwt-authentication/oauth-resource/paths.ts';
import type { McpOAuthResource, ResourceAddress } from '../../policies/traffic/jwt-authentication/oauth-resource/resource.ts';
import { proxyTokenRequest } from './token-proxy.ts';

/** The jwtAuthentication step exposes its MCP OAuth face here (policies/traffic/jwt-authentication/mcp-oauth.ts). */
export interface McpOAuthStep extends TrafficStep {
  readonly mcpOAuth: McpOAuthResource;
}

export const isMcpOAuthStep = (step: TrafficStep): step is McpOAuthStep => 'mcpOAuth' in step;

const MAX_REGISTRATION_BYTES = 64 * 1024;
/** Discovery documents are public; browser-based MCP clients fetch them cross-origin. */
const CORS = { 'access-control-allow-origin': '*' } as const;
const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store', ...CORS } as const;

/**
 * The answer to one discovery request, once the pipeline has routed it to the resource's route
 * and run what comes before that route's jwtAuthentication step (src/proxy/pipeline/mcp-discovery.ts).
 */
export async function answerDiscovery(resource: McpOAuthResource, document: OAuthDocument, a: ResourceAddress, req: DownstreamRequest, query: string): Promise<DirectResponse> {
  const method = req.method ?? 'GET';
  if (method === 'OPTIONS') {
    return { status: 204, headers: { ...CORS, 'access-control-allow-methods': document === 'registration' || document === 'token' ? 'POST' : 'GET', 'access-control-allow-headers': 'content-type, mcp-protocol-version' } };
  }
  switch (document) {
    case 'protected-resource':
      if (method !== 'GET') return methodNotAllowed('GET');
      return json(200, resource.protectedResource(a));
    case 'authorization-server':
      // Not fronted: the resource document names the IdP itself, so nothing of ours lives here.
      if (!resource.fronted) return oauthError(404, 'not_found', 'this resource names its authorization server directly');
      if (method !== 'GET') return methodNotAllowed('GET');
      return resource.authorizationServer(a).then((doc) => json(200, doc), unavailable);
    case 'registration':
      if (resource.config.clientId === undefined) return oauthError(404, 'not_found', 'no clientId is configured for this resource');
      if (method !== 'POST') return methodNotAllowed('POST');
      return registration(resource, req);
    case 'token':
      if (resource.config.clientSecret === undefined) return oauthError(404, 'not_found', 'no clientSecretRef is configured for this resource');
      if (method !== 'POST') return methodNotAllowed('POST');
      return proxyTokenRequest(resource, req.headers['content-type'], req as AsyncIterable<Buffer>);
    case 'authorize': {
      if (!resource.quirks.audienceParameter) return oauthError(404, 'not_found', 'this provider needs no authorization redirect');
      if (method !== 'GET') return methodNotAllowed('GET');
      const location = await resource.authorizeRedirect(a, query).catch(() => undefined);
      return location === undefined ? unavailable() : { status: 302, headers: { location, 'cache-control': 'no-store' } };
    }
  }
}

async function registration(resource: McpOAuthResource, req: DownstreamRequest): Promise<DirectResponse> {
  let text: string;
  try {
    text = await readTextBounded(req, MAX_REGISTRATION_BYTES, { destroy: false });
  } catch (error) {
    if (error instanceof BodyTooLargeError) return oauthError(413, 'invalid_client_metadata', `registration body larger than ${MAX_REGISTRATION_BYTES} bytes`);
    throw error;
  }
  let metadata: unknown;
  try {
    metadata = JSON.parse(text);
  } catch {
    return oauthError(400, 'invalid_client_metadata', 'the body is not JSON');
  }
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return oauthError(400, 'invalid_client_metadata', 'the body is not a JSON object');
  return json(201, resource.register(metadata as Record<string, unknown>));
}

const json = (status: number, body: unknown): DirectResponse => ({ status, headers: JSON_HEADERS, body: JSON.stringify(body) });
/** RFC 6749 §5.2 / RFC 7591 §3.2.2 error shape, which OAuth clients parse. */
const oauthError = (status: number, error: string, description: string): DirectResponse => json(status, { error, error_description: description });
const methodNotAllowed = (allow: string): DirectResponse => ({ ...oauthError(405, 'invalid_request', `use ${allow}`), headers: { ...JSON_HEADERS, allow } });
const unavailable = (): DirectResponse => oauthError(502, 'temporarily_unavailable', 'the identity provider did not publish its metadata');
