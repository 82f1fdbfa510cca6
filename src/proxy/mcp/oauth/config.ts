import type { JsonObject } from '../../../ir/policy.ts';
import { IDP_VALUES, type IdpValue } from './providers.ts';

/** `jwtAuthentication.mcp` (or the deprecated backend `mcp.authentication`), checked. */
export interface McpOAuthConfig {
  /** Extra RFC 9728 fields merged into the protected-resource document (they win). */
  readonly resourceMetadata: JsonObject;
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

/** Throws on a shape the translator should have rejected: the jwt member then fails closed. */
export function parseMcpOAuthConfig(mcp: JsonObject, issuer: string | undefined): McpOAuthConfig {
  const { resourceMetadata, provider, clientId, clientSecret } = mcp;
  if (resourceMetadata !== undefined && (resourceMetadata === null || typeof resourceMetadata !== 'object' || Array.isArray(resourceMetadata))) {
    throw new Error('mcp.resourceMetadata must be an object');
  }
  if (provider !== undefined && !IDP_VALUES.includes(provider as IdpValue)) throw new Error(`mcp.provider must be one of ${IDP_VALUES.join(', ')}`);
  if (clientId !== undefined && (typeof clientId !== 'string' || clientId === '')) throw new Error('mcp.clientId must be a non-empty string');
  if (clientSecret !== undefined && (typeof clientSecret !== 'string' || clientSecret === '')) throw new Error('mcp.clientSecretRef must name a non-empty Secret entry');
  if (clientSecret !== undefined && clientId === undefined) throw new Error('mcp.clientSecretRef needs mcp.clientId (the client the secret belongs to)');
  if (issuer === undefined || !URL.canParse(issuer)) throw new Error('mcp needs a provider whose issuer is a URL (the authorization server)');
  return {
    resourceMetadata: (resourceMetadata ?? {}) as JsonObject,
    provider: provider as IdpValue | undefined,
    clientId: clientId as string | undefined,
    clientSecret: clientSecret as string | undefined,
    issuer,
  };
}
