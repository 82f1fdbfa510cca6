/**
 * How each identity provider (`jwtAuthentication.mcp.provider`, VENDORS.md) publishes its OAuth
 * metadata and which MCP-relevant features it lacks. The gateway's authorization-server metadata
 * (./authorization-server.ts) is the provider's document corrected by these flags.
 */
export type IdpValue = 'idp_1' | 'idp_2' | 'idp_3' | 'idp_4' | 'idp_5' | 'idp_6';

export const IDP_VALUES: readonly IdpValue[] = ['idp_1', 'idp_2', 'idp_3', 'idp_4', 'idp_5', 'idp_6'];

export interface ProviderQuirks {
  readonly vendor: string;
  /** Discovery documents to try, in order, for an issuer URL. */
  discoveryUrls(issuer: string): string[];
  /** Serves RFC 7591 Dynamic Client Registration (when the tenant enables it). */
  readonly dynamicRegistration: boolean;
  /**
   * Ignores the RFC 8707 `resource` parameter MCP clients send and picks the token's audience from
   * an `audience` parameter instead: the gateway's authorization endpoint redirects with it added.
   */
  readonly audienceParameter: boolean;
  /** Its document lists `code_challenge_methods_supported`; MCP clients refuse an AS without it. */
  readonly advertisesPkce: boolean;
}

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

/** `{issuer}/.well-known/<name>`: the OIDC form, appended after the issuer's path. */
const appended = (name: string) => (issuer: string): string => `${trimSlash(issuer)}/.well-known/${name}`;

/** `{origin}/.well-known/<name>{path}`: the RFC 8414 §3.1 form, inserted before the issuer's path. */
const inserted = (name: string) => (issuer: string): string => {
  const url = new URL(issuer);
  const path = trimSlash(url.pathname);
  return `${url.origin}/.well-known/${name}${path}`;
};

const unique = (urls: string[]): string[] => [...new Set(urls)];

/** No provider named: the RFC 8414 form first, then both OpenID Connect forms (as MCP clients try them). */
export const GENERIC: ProviderQuirks = {
  vendor: 'generic',
  discoveryUrls: (i) => unique([inserted('oauth-authorization-server')(i), inserted('openid-configuration')(i), appended('openid-configuration')(i)]),
  dynamicRegistration: true,
  audienceParameter: false,
  advertisesPkce: true,
};

export const PROVIDER_QUIRKS: Readonly<Record<IdpValue, ProviderQuirks>> = {
  // Auth0: issuer `https://<tenant>.auth0.com/`; the API is chosen by `audience`, not RFC 8707 `resource`.
  idp_1: { vendor: 'Auth0', discoveryUrls: (i) => [appended('openid-configuration')(i)], dynamicRegistration: true, audienceParameter: true, advertisesPkce: true },
  // Keycloak: issuer `https://<host>/realms/<realm>`; documents live under the realm path, not inserted before it.
  idp_2: { vendor: 'Keycloak', discoveryUrls: (i) => [appended('openid-configuration')(i), appended('oauth-authorization-server')(i)], dynamicRegistration: true, audienceParameter: false, advertisesPkce: true },
  // Okta: issuer `https://<org>/oauth2/<server>`; the custom authorization server publishes both documents appended.
  idp_3: { vendor: 'Okta', discoveryUrls: (i) => [appended('oauth-authorization-server')(i), appended('openid-configuration')(i)], dynamicRegistration: true, audienceParameter: false, advertisesPkce: true },
  // Descope: issuer `https://api.descope.com/v1/apps/<project>`; OIDC document appended; built for MCP (DCR, resource).
  idp_4: { vendor: 'Descope', discoveryUrls: (i) => [appended('openid-configuration')(i)], dynamicRegistration: true, audienceParameter: false, advertisesPkce: true },
  // Authentik: issuer `https://<host>/application/o/<slug>/` (trailing slash); no DCR.
  idp_5: { vendor: 'Authentik', discoveryUrls: (i) => [appended('openid-configuration')(i)], dynamicRegistration: false, audienceParameter: false, advertisesPkce: true },
  // Entra ID: issuer `https://login.microsoftonline.com/<tenant>/v2.0`; only the OIDC document, no DCR
  // (register the client and set `clientId`), and PKCE S256 supported but not advertised.
  idp_6: { vendor: 'Entra ID', discoveryUrls: (i) => [appended('openid-configuration')(i)], dynamicRegistration: false, audienceParameter: false, advertisesPkce: false },
};

export function quirksOf(provider: IdpValue | undefined): ProviderQuirks {
  return provider === undefined ? GENERIC : PROVIDER_QUIRKS[provider];
}
