/**
 * The discovery paths the gateway answers for an MCP resource. Each is a fixed prefix followed by
 * the resource's own path (RFC 9728 §3.1 / RFC 8414 §3.1 path-suffixed form):
 *
 *   GET  /.well-known/oauth-protected-resource/mcp   protected-resource metadata of …/mcp
 *   GET  /.well-known/oauth-authorization-server/mcp the IdP's metadata, adjusted (gateway as facade)
 *   GET  /.well-known/openid-configuration/mcp       the same document (clients try both)
 *   POST /.well-known/oauth-registration/mcp         DCR short-circuit (`clientId` set)
 *   GET  /.well-known/oauth-authorize/mcp            redirect to the IdP's authorize with `audience` (idp_1)
 *   POST /.well-known/oauth-token/mcp                token requests proxied to the IdP with the client secret (`clientSecretRef`)
 *
 * The last three are our own names inside the RFC 8615 reserved namespace, so it cannot shadow an
 * application path.
 */
export const WELL_KNOWN = '/.well-known/';

export type OAuthDocument = 'protected-resource' | 'authorization-server' | 'registration' | 'authorize' | 'token';

const PREFIXES: readonly (readonly [string, OAuthDocument])[] = [
  ['/.well-known/oauth-protected-resource', 'protected-resource'],
  ['/.well-known/oauth-authorization-server', 'authorization-server'],
  ['/.well-known/openid-configuration', 'authorization-server'],
  ['/.well-known/oauth-registration', 'registration'],
  ['/.well-known/oauth-authorize', 'authorize'],
  ['/.well-known/oauth-token', 'token'],
];

export const PROTECTED_RESOURCE_PREFIX = PREFIXES[0][0];
export const AUTHORIZATION_SERVER_PREFIX = PREFIXES[1][0];
export const REGISTRATION_PREFIX = PREFIXES[3][0];
export const AUTHORIZE_PREFIX = PREFIXES[4][0];
export const TOKEN_PREFIX = PREFIXES[5][0];

/** Which document a request path asks for, and for which resource path (`/` for the bare form). */
export function parseOAuthPath(path: string): { readonly document: OAuthDocument; readonly resourcePath: string } | undefined {
  if (!path.startsWith(WELL_KNOWN)) return undefined;
  for (const [prefix, document] of PREFIXES) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    if (rest === '') return { document, resourcePath: '/' };
    if (rest.charCodeAt(0) === 47 /* / */) return { document, resourcePath: rest };
  }
  return undefined;
}

/** The path of a resource's document: the bare prefix for `/`, else prefix + path. */
export function documentPath(prefix: string, resourcePath: string): string {
  return resourcePath === '/' ? prefix : prefix + resourcePath;
}
