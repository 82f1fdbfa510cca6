/**
 * Backend auth `oauthTokenExchange`: trades the client's token at an OAuth token endpoint for one
 * the backend accepts — RFC 8693 token exchange (default) or the RFC 7523 JWT bearer grant — with
 * the configured client authentication, and caches results per subject/actor/parameters.
 */
import { decodeJwt } from 'jose';
import { compile, createActivation, evalString } from '../../../cel/index.ts';
import type { CredentialLocation, OAuthTokenExchangeAuth } from '../../../ir/policy.ts';
import { DEFAULT_CREDENTIAL_LOCATION } from './auth.ts';
import {
  compileTokenEndpoint, GRANT_JWT_BEARER, GRANT_TOKEN_EXCHANGE, OAuthTokenCache, requestToken, tokenSource, tokenType,
  TokenExchangeRejection, type CredentialSource,
} from './oauth-endpoint.ts';

export { TokenExchangeRejection } from './oauth-endpoint.ts';

export interface TokenExchanger {
  /** Where the exchanged token goes (default Authorization: Bearer). */
  readonly location: CredentialLocation;
  exchange(ctx: CredentialSource): Promise<string>;
}

/** Compiled at config time; throws on what cannot work (missing endpoint, bad key, bad CEL). */
export function compileTokenExchange(spec: OAuthTokenExchangeAuth): TokenExchanger {
  const endpoint = compileTokenEndpoint(spec, spec.clientAuth, 'oauthTokenExchange');
  const jwtBearer = spec.grantType === 'JwtBearer';
  const subject = tokenSource(spec.subjectToken, 'AccessToken', 'oauthTokenExchange.subjectToken');
  const actorSpec = spec.actorToken;
  const actor = actorSpec ? tokenSource(actorSpec, 'AccessToken', 'oauthTokenExchange.actorToken') : undefined;
  const mayActRequired = actorSpec?.mayAct === 'Required';
  const requested = spec.requestedTokenType !== undefined ? tokenType(spec.requestedTokenType, 'AccessToken', 'oauthTokenExchange.requestedTokenType') : undefined;
  const audiences = spec.audiences ?? [];
  const resources = spec.resources ?? [];
  const scopes = spec.scopes ?? [];
  const additional = Object.entries(spec.additionalParams ?? {}).map(([name, expression]) => {
    const r = compile(expression);
    if (!r.ok) throw new Error(`oauthTokenExchange.additionalParams.${name}: invalid CEL expression: ${r.error.message}`);
    return { name, program: r.program };
  });
  const cache = new OAuthTokenCache(spec.cache);

  return {
    location: spec.location ?? DEFAULT_CREDENTIAL_LOCATION,
    exchange(ctx) {
      const subjectToken = subject.extract(ctx);
      if (!subjectToken) return Promise.reject(new TokenExchangeRejection(401, 'no subject token to exchange'));
      const actorToken = actor?.extract(ctx);
      if (actor && mayActRequired && (!actorToken || !mayAct(subjectToken, actorToken))) return Promise.reject(new TokenExchangeRejection(403, 'the subject token does not authorize this actor (may_act)'));
      const form = new URLSearchParams();
      if (jwtBearer) {
        form.set('grant_type', GRANT_JWT_BEARER);
        form.set('assertion', subjectToken);
      } else {
        form.set('grant_type', GRANT_TOKEN_EXCHANGE);
        form.set('subject_token', subjectToken);
        form.set('subject_token_type', subject.type);
        if (actor && actorToken) {
          form.set('actor_token', actorToken);
          form.set('actor_token_type', actor.type);
        }
        if (requested) form.set('requested_token_type', requested);
        for (const a of audiences) form.append('audience', a);
        for (const r of resources) form.append('resource', r);
      }
      if (scopes.length > 0) form.set('scope', scopes.join(' '));
      if (additional.length > 0) {
        const activation = createActivation(ctx.cel());
        for (const { name, program } of additional) {
          // A parameter whose expression fails is left out; the token endpoint decides without it.
          const value = evalString(program, activation);
          if (value.ok) form.set(name, value.value);
        }
      }
      // The form before client authentication names everything the token depends on.
      return cache.get(OAuthTokenCache.key(form.toString()), () => requestToken(endpoint, form, cache.defaultTtlMs));
    },
  };
}

/** RFC 8693 §4.4: the subject's may_act claim must name the actor (sub, and iss when given). */
function mayAct(subjectToken: string, actorToken: string): boolean {
  try {
    const claim = decodeJwt(subjectToken).may_act as { sub?: unknown; iss?: unknown } | undefined;
    const actor = decodeJwt(actorToken);
    if (!claim || claim.sub === undefined || claim.sub !== actor.sub) return false;
    return claim.iss === undefined || claim.iss === actor.iss;
  } catch {
    return false;
  }
}
