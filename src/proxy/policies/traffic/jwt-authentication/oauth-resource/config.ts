import type { Json, JwtMcpPolicy } from '../../../../../ir/policy.ts';
import { IDP_VALUES, type IdpValue } from './providers.ts';

/** `jwtAuthentication.mcp` (or the deprecated backend `mcp.authentication`), checked. */
export interface McpOAuthConfig {
  /** Extra RFC 9728 fields merged into the protected-resource document (they win). */
  readonly resourceMetadata: Readonly<Record<string, Json>>;
  readonly provider: IdpValue | undefined;
  /** Short-circuits Dynamic Client Registration: the gateway answers registrations with this id. */
  readonly clientId: string | undefined;
  /**
   * The client's secret at the IdP (`clientSecretRef`, resolved at translate time): the gateway
   * then proxies token requests and adds it, so MCP clients stay public PKCE clients.
   */
  readonly clientSecret: string | undefined;
  /** The issuer whose authorization server clients are sent to (the first JWT provider's). */
  readonly issuer: string;
}

/**
 * Checks what the member's type cannot say (src/ir/validate.ts checks the shape before a config is
 * published). Throws on a combination the translator should have rejected: the jwt member then
 * fails closed.
 */
export function parseMcpOAuthConfig(mcp: JwtMcpPolicy, issuer: string | undefined): McpOAuthConfig {
  const { resourceMetadata, provider, clientId, clientSecret } = mcp;
  if (provider !== undefined && !IDP_VALUES.includes(provider)) throw new Error(`mcp.provider must be one of ${IDP_VALUES.join(', ')}`);
  if (clientId === '') throw new Error('mcp.clientId must be a non-empty string');
  if (clientSecret === '') throw new Error('mcp.clientSecretRef must name a non-empty Secret entry');
  if (clientSecret !== undefined && clientId === undefined) throw new Error('mcp.clientSecretRef needs mcp.clientId (the client the secret belongs to)');
  if (issuer === undefined || !URL.canParse(issuer)) throw new Error('mcp needs a provider whose issuer is a URL (the authorization server)');
  return { resourceMetadata: resourceMetadata ?? {}, provider, clientId, clientSecret, issuer };
}
