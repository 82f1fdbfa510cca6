import type { JwtAuthenticationPolicy } from '../../../../ir/policy.ts';
import type { Logger } from '../../../../common/logger.ts';
import { parseMcpOAuthConfig } from './oauth-resource/config.ts';
import { McpOAuthResource, type ResourceAddress } from './oauth-resource/resource.ts';
import type { PolicyContext } from '../../context.ts';
import { unauthorized } from '../../credentials/unauthorized.ts';
import type { PolicyResult } from '../../result.ts';

/**
 * `jwtAuthentication.mcp`: the policy's MCP OAuth face (discovery documents are answered before
 * routing by src/proxy/mcp/oauth/well-known.ts, which finds it on the compiled step), and the 401
 * challenges that point clients at it. Throws on an invalid `mcp`, which fails the member closed.
 */
export function compileMcpOAuth(member: JwtAuthenticationPolicy, logger: Logger): McpOAuthResource | undefined {
  if (member.mcp === undefined) return undefined;
  const first = member.providers[0];
  const config = parseMcpOAuthConfig(member.mcp, first?.issuer);
  return new McpOAuthResource(config, first?.audiences?.[0], logger);
}

/** The resource as this client reached it: its scheme and authority, and the request path. */
function addressOf(ctx: PolicyContext): ResourceAddress {
  const raw = ctx.downstreamHeaders[':authority'] ?? ctx.downstreamHeaders.host;
  const authority = typeof raw === 'string' && raw !== '' ? raw : ctx.host;
  return { origin: `${ctx.scheme}://${authority}`, path: ctx.path };
}

/** 401 for a missing token (RFC 6750 §3.1: no error code) or a rejected one, with `resource_metadata`. */
export function mcpUnauthorized(resource: McpOAuthResource, ctx: PolicyContext, rejectedReason?: string): PolicyResult {
  const address = addressOf(ctx);
  if (rejectedReason === undefined) return unauthorized('a bearer token is required', resource.challenge(address));
  return unauthorized(rejectedReason, resource.challenge(address, { error: 'invalid_token', description: rejectedReason }));
}
