/**
 * IR types of the policy members the translator lowers mechanically (src/ir/lowered.ts), each
 * derived from its API schema type so a schema change shows up here (and in every consumer) at
 * compile time. Members the translator reshapes by hand (authorization, client authentication,
 * backend TLS, MCP) are written out in src/ir/policy.ts and src/ir/mcp.ts.
 */
import type { Static } from 'typebox';
import type { ProxyPolicySpec } from '../api/v1alpha1/policy/proxy-policy.ts';
import type { ExtAuth } from '../api/v1alpha1/policies/ext-auth.ts';
import type { ExtProc } from '../api/v1alpha1/policy/ext-proc.ts';
import type { RateLimit } from '../api/v1alpha1/policy/rate-limit.ts';
import type { Lowered } from './lowered.ts';

type ApiTraffic = NonNullable<ProxyPolicySpec['traffic']>;
type ApiFrontend = NonNullable<ProxyPolicySpec['frontend']>;
type ApiBackendAuth = NonNullable<NonNullable<ProxyPolicySpec['backend']>['auth']>;
type Api<S, K extends keyof S> = NonNullable<S[K]>;

/** traffic and backend `extAuth` (one direct entry); `forwardBody.maxSize` in bytes. */
export type ExtAuthPolicy = Lowered<Static<ReturnType<typeof ExtAuth>>>;
/** traffic `extProc` (one direct entry). */
export type ExtProcPolicy = Lowered<Static<ReturnType<typeof ExtProc>>>;
/** traffic `rateLimit` (one direct entry): `local` buckets as written, `global` with its endpoint resolved. */
export type RateLimitPolicy = Lowered<Static<ReturnType<typeof RateLimit>>>;
export type LocalRateLimitPolicy = NonNullable<RateLimitPolicy['local']>[number];
export type GlobalRateLimitPolicy = NonNullable<RateLimitPolicy['global']>;

/**
 * traffic `cors` and `retry`: the API keeps them as written (JSON objects whose fields follow the
 * Gateway API's HTTPCORSFilter / HTTPRouteRetry, not checked by the schema), so the proxy parses
 * them and a malformed one fails closed when compiled.
 */
export type CorsPolicy = Lowered<Api<ApiTraffic, 'cors'>>;
export type RetryPolicySpec = Lowered<Api<ApiTraffic, 'retry'>>;
/** traffic `headerModifiers`: Gateway API HTTPHeaderFilters for the request and the response (static values). */
export type HeaderModifiersPolicy = Lowered<Api<ApiTraffic, 'headerModifiers'>>;
export type HeaderFilterPolicy = NonNullable<HeaderModifiersPolicy['request']>;
/** traffic `jwtAuthentication.mcp`: `clientSecretRef` resolved to `clientSecret`. */
export type JwtMcpPolicy = Lowered<NonNullable<Api<ApiTraffic, 'jwtAuthentication'>['mcp']>>;

/** frontend `tcp`: keepalive `timeMs`/`intervalMs`. */
export type FrontendTcpPolicy = Lowered<Api<ApiFrontend, 'tcp'>, 'time' | 'interval'>;
/** frontend `tls`: `handshakeTimeoutMs`. */
export type FrontendTlsPolicy = Lowered<Api<ApiFrontend, 'tls'>, 'handshakeTimeout'>;
/** frontend `http`: sizes in bytes, durations in milliseconds. */
export type FrontendHttpPolicy = Lowered<Api<ApiFrontend, 'http'>, 'http1IdleTimeout' | 'http2KeepaliveInterval' | 'http2KeepaliveTimeout' | 'maxConnectionDuration'>;
export type AccessLogPolicy = Lowered<Api<ApiFrontend, 'accessLog'>>;
export type TracingPolicy = Lowered<Api<ApiFrontend, 'tracing'>>;
export type MetricsPolicy = Lowered<Api<ApiFrontend, 'metrics'>>;

/** backend `auth` mechanisms with their Secret references resolved (`secretRef` → `secret` …). */
/** `passthrough` has no fields (`{}` in the API). */
export type PassthroughAuth = Readonly<Record<string, never>>;
export type CloudAAuth = Lowered<Api<ApiBackendAuth, 'cloudA'>>;
export type CloudBAuth = Lowered<Api<ApiBackendAuth, 'cloudB'>>;
export type CloudCAuth = Lowered<Api<ApiBackendAuth, 'cloudC'>>;
/** `cache.inMemory.defaultTtlMs`. */
export type OAuthTokenExchangeAuth = Lowered<Api<ApiBackendAuth, 'oauthTokenExchange'>, 'defaultTtl'>;
export type CrossAppAccessAuth = Lowered<Api<ApiBackendAuth, 'crossAppAccess'>, 'defaultTtl'>;
/** `ttlMs`. */
export type JwtSignAuth = Lowered<Api<ApiBackendAuth, 'jwtSign'>, 'ttl'>;
/** What the OAuth mechanisms share (API OAuthClientAuth, OAuthTokenSpec, OAuthTokenCache, the token endpoint). */
export type OAuthClientAuthPolicy = NonNullable<OAuthTokenExchangeAuth['clientAuth']>;
export type OAuthPrivateKeyJwtPolicy = NonNullable<OAuthClientAuthPolicy['privateKeyJwt']>;
export type OAuthTokenSpecPolicy = NonNullable<OAuthTokenExchangeAuth['subjectToken']>;
export type OAuthTokenCachePolicy = NonNullable<OAuthTokenExchangeAuth['cache']>;
/** A token endpoint: `backendKey` or `url`, `path` (default '/'). */
export type OAuthTokenEndpointPolicy = Pick<OAuthTokenExchangeAuth, 'backendKey' | 'url' | 'path'>;
