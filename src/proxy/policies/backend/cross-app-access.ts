/**
 * Backend auth `crossAppAccess` (Identity Assertion JWT Authorization Grant, ID-JAG,
 * draft-ietf-oauth-identity-assertion-authz-grant): two token requests per subject.
 *
 * 1. At `identityProvider`, an RFC 8693 token exchange of the client's identity assertion (by
 *    default its ID token from Authorization Bearer) for an ID-JAG:
 *    `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, `audience` (the resource
 *    authorization server's issuer), `resource`s and `scope`.
 * 2. At `resourceAuthorizationServer`, an RFC 7523 jwt-bearer grant with the ID-JAG as
 *    `assertion`, which answers the access token sent to the backend as `Authorization: Bearer`.
 *
 * Each step authenticates with its own `clientAuth`. The access token is cached per (subject,
 * audience, resources, scopes) for its lifetime; the ID-JAG itself is single-purpose and not kept.
 */
import type { CredentialLocation, CrossAppAccessAuth } from '../../../ir/policy.ts';
import { DEFAULT_CREDENTIAL_LOCATION } from './auth.ts';
import {
  compileTokenEndpoint, GRANT_JWT_BEARER, GRANT_TOKEN_EXCHANGE, OAuthTokenCache, requestToken, str, tokenSource,
  TOKEN_TYPES, TokenEndpointError, TokenExchangeRejection, type CredentialSource,
} from './oauth-endpoint.ts';

export interface CrossAppAccess {
  /** Always Authorization: Bearer (the mechanism has no location). */
  readonly location: CredentialLocation;
  accessToken(ctx: CredentialSource): Promise<string>;
}

/** Compiled at config time; throws on what cannot work (missing endpoint or clientAuth, bad key). */
export function compileCrossAppAccess(spec: CrossAppAccessAuth): CrossAppAccess {
  // Required by the type; checked again because a hand-written IR (embedded mode, tests) may omit them
  // and this mechanism must fail closed rather than throw a TypeError per request.
  const { identityProvider: idpSpec, resourceAuthorizationServer: asSpec } = spec as Partial<CrossAppAccessAuth>;
  if (!idpSpec || !asSpec) throw new Error('crossAppAccess needs identityProvider and resourceAuthorizationServer');
  const audience = str(spec.audience);
  if (!audience) throw new Error('crossAppAccess needs audience');
  if (!idpSpec.clientAuth || !asSpec.clientAuth) throw new Error('crossAppAccess needs clientAuth at identityProvider and resourceAuthorizationServer');
  const idp = compileTokenEndpoint(idpSpec, idpSpec.clientAuth, 'crossAppAccess.identityProvider');
  const resourceAs = compileTokenEndpoint(asSpec, asSpec.clientAuth, 'crossAppAccess.resourceAuthorizationServer');
  const subject = tokenSource(spec.subjectToken, 'IdToken', 'crossAppAccess.subjectToken');
  const resources = spec.resources ?? [];
  const scopes = spec.scopes ?? [];
  const cache = new OAuthTokenCache(spec.cache);

  const fetch = async (subjectToken: string) => {
    const exchange = new URLSearchParams({
      grant_type: GRANT_TOKEN_EXCHANGE,
      requested_token_type: TOKEN_TYPES.IdJag,
      audience,
      subject_token: subjectToken,
      subject_token_type: subject.type,
    });
    for (const r of resources) exchange.append('resource', r);
    if (scopes.length > 0) exchange.set('scope', scopes.join(' '));
    const grant = await requestToken(idp, exchange, cache.defaultTtlMs);
    // The draft has the IdP answer issued_token_type id-jag; another type is not an ID-JAG the resource AS would take.
    if (grant.issuedTokenType !== undefined && grant.issuedTokenType !== TOKEN_TYPES.IdJag) {
      throw new TokenEndpointError(`identity provider issued ${grant.issuedTokenType}, not an ID-JAG`);
    }
    const bearer = new URLSearchParams({ grant_type: GRANT_JWT_BEARER, assertion: grant.token });
    return requestToken(resourceAs, bearer, cache.defaultTtlMs);
  };

  return {
    location: DEFAULT_CREDENTIAL_LOCATION,
    accessToken(ctx) {
      const subjectToken = subject.extract(ctx);
      if (!subjectToken) return Promise.reject(new TokenExchangeRejection(401, 'no identity assertion (subject token) for cross-app access'));
      return cache.get(OAuthTokenCache.key('xaa', audience, resources.join(' '), scopes.join(' '), subject.type, subjectToken), () => fetch(subjectToken));
    },
  };
}
