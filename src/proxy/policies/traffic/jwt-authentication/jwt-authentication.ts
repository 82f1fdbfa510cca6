import type { JwtProvider } from '../../../../ir/policy.ts';
import { withUrlFallback } from '../../../ext/endpoint.ts';
import type { PolicyContext } from '../../context.ts';
import { ExpiringLru } from '../../credentials/expiring-lru.ts';
import { compileCredentialExtractor } from '../../credentials/location.ts';
import { quoted, unauthorized } from '../../credentials/unauthorized.ts';
import { CONTINUE, type PolicyResult } from '../../result.ts';
import type { StepCompiler, StepDeps } from '../../step.ts';
import { inlineKeys, RemoteJwks } from './jwks-source.ts';
import { compileMcpOAuth, mcpUnauthorized } from './mcp-oauth.ts';
import { verifyToken, type ProviderVerifier, type Verification } from './token-verifier.ts';

const BEARER = { header: { name: 'Authorization', prefix: 'Bearer ' } };
/** Verified tokens kept per policy (jose verifies ~5k RS256 tokens/s; a hit is a Map lookup). */
const VERIFIED_CACHE_ENTRIES = 4096;
/** A cached token is re-verified at least this often, so a key removed from the JWKS stops working. */
const VERIFIED_CACHE_MAX_MS = 5 * 60_000;

interface Verified {
  readonly claims: Record<string, unknown>;
}

/**
 * traffic.jwtAuthentication: a bearer JWT verified against the provider named by its issuer.
 * On success the claims become `jwt.*` for later steps and CEL, and the token is kept for a
 * backend's `auth.passthrough`; nothing is stripped from the request. Failures answer 401 with
 * `WWW-Authenticate: Bearer` (RFC 6750 §3), adding `error="invalid_token"` when a token was sent.
 */
export const compileJwtAuthentication: StepCompiler<'jwtAuthentication'> = (member, deps) => {
  const extract = compileCredentialExtractor(member.location ?? BEARER, 'jwtAuthentication.location');
  const providers = member.providers.map((p, i) => providerVerifier(p, i, deps));
  const mcpOAuth = compileMcpOAuth(member, deps.logger);
  const verified = new ExpiringLru<Verified>(VERIFIED_CACHE_ENTRIES);
  const mode = member.mode;

  const accept = (ctx: PolicyContext, token: string, claims: Record<string, unknown>): PolicyResult => {
    ctx.identity.jwt = { claims, token };
    ctx.identity.passthroughToken = token;
    return CONTINUE;
  };
  const finish = (ctx: PolicyContext, token: string, result: Verification): PolicyResult => {
    if (result.ok) {
      const claims = result.claims as Record<string, unknown>;
      verified.set(token, { claims }, cacheUntil(claims));
      return accept(ctx, token, claims);
    }
    deps.logger.debug({ route: ctx.names.route, reason: result.reason }, 'jwtAuthentication rejected a token');
    if (mode === 'Permissive') return CONTINUE;
    if (mcpOAuth) return mcpUnauthorized(mcpOAuth, ctx, result.reason);
    return unauthorized(result.reason, `Bearer error="invalid_token", error_description=${quoted(result.reason)}`);
  };

  return {
    member: 'jwtAuthentication',
    // Found here by the well-known answers (src/proxy/mcp/oauth/well-known.ts); absent without `mcp`.
    ...(mcpOAuth && { mcpOAuth }),
    onRequest(ctx) {
      const token = extract(ctx);
      if (token === undefined) {
        if (mode !== 'Strict') return CONTINUE;
        return mcpOAuth ? mcpUnauthorized(mcpOAuth, ctx) : unauthorized('a bearer token is required', 'Bearer');
      }
      const hit = verified.get(token);
      if (hit) return accept(ctx, token, hit.claims);
      return verifyToken(token, providers).then((result) => finish(ctx, token, result));
    },
  };
};

function providerVerifier(p: JwtProvider, index: number, deps: StepDeps): ProviderVerifier {
  const audiences = p.audiences && p.audiences.length > 0 ? p.audiences : undefined;
  if ('inline' in p.jwks) return { issuer: p.issuer, audiences, keys: inlineKeys(p.jwks.inline) };
  const remote = p.jwks.remote;
  if (remote.backendKey !== undefined && !deps.endpoints) throw new Error(`providers[${index}].jwks.remote: backend endpoints cannot be resolved here; use a url`);
  if (remote.backendKey === undefined && remote.url === undefined) throw new Error(`providers[${index}].jwks.remote needs a backendRef or url`);
  const resolve = withUrlFallback(deps.endpoints);
  const endpoint = { backendKey: remote.backendKey, url: remote.url };
  const source = new RemoteJwks({ endpoint: () => resolve(endpoint).next(), jwksPath: remote.jwksPath, cacheDurationMs: remote.cacheDurationMs, logger: deps.logger });
  return { issuer: p.issuer, audiences, keys: source.lookup };
}

/** Until the token expires, but never longer than the re-verification bound. */
function cacheUntil(claims: Record<string, unknown>): number {
  const bound = Date.now() + VERIFIED_CACHE_MAX_MS;
  return typeof claims.exp === 'number' ? Math.min(claims.exp * 1000, bound) : bound;
}
