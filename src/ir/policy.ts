/**
 * Effective policies in the IR. The translator resolves ProxyPolicy attachment, precedence and
 * merging (docs/policies.md), so the proxy never merges: each place carries exactly the members
 * in effect there.
 *
 *   Bind.frontend                         FrontendPolicy  (Gateway-level, per port)
 *   Listener.preRouting                   TrafficPolicy   (phase PreRouting: Gateway < Listener)
 *   RouteRule.traffic                     TrafficPolicy   (PostRouting: Gateway < Listener < Route < Rule)
 *   WeightedBackend.backendPolicy         BackendPolicy   (… < Rule < Service/ProxyBackend < inline)
 *
 * A route attached to several listeners may see different Gateway/Listener policies on each; then
 * `RouteRule.trafficByListener` (and `WeightedBackend.backendPolicyByListener`) hold one value per
 * listener key instead, so the lookup is always `byListener?.[listener.key] ?? plain`.
 *
 * Member shapes follow SPEC.md's field names with four mechanical changes:
 *   - a Duration field `x` becomes `xMs` (milliseconds, number);
 *   - a ByteSize becomes a number of bytes (same name);
 *   - an endpoint `backendRef` becomes `backendKey` (a key of ProxyConfig.backends); `url` stays;
 *   - a Secret reference `xRef` becomes `x` holding the value (a key reference) or the Secret's
 *     decoded entries (an object reference). Backend `auth.secretRef` becomes `auth.key`.
 * CEL expressions are kept as text; the translator has already compiled each one.
 */

import type { AiPolicy } from './ai.ts';
import type { McpPolicyIR } from './mcp.ts';
import type {
  AccessLogPolicy, CloudAAuth, CloudBAuth, CloudCAuth, CorsPolicy, CrossAppAccessAuth, ExtAuthPolicy, ExtProcPolicy,
  FrontendHttpPolicy, FrontendTcpPolicy, FrontendTlsPolicy, HeaderModifiersPolicy, JwtMcpPolicy, JwtSignAuth, MetricsPolicy,
  OAuthTokenExchangeAuth, PassthroughAuth, RateLimitPolicy, RetryPolicySpec, TracingPolicy,
} from './members.ts';

export type * from './members.ts';

/** Which object a member came from: `ProxyPolicy/<ns>/<name>` or `ProxyBackend/<ns>/<name>` (inline policies). */
export type PolicySource = string;

/**
 * A policy that would apply here but is invalid (bad CEL, missing Secret, schema error). The
 * proxy fails closed: requests that reach this place are answered 500 and never forwarded.
 */
export interface InvalidPolicy {
  readonly source: PolicySource;
  readonly message: string;
}

/** Member name → the policy objects it came from (several only for accumulated members). */
export type MemberSources<M extends string> = Readonly<Partial<Record<M, readonly PolicySource[]>>>;

export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { readonly [key: string]: Json };

/** One of an external service's endpoint: a backend of ProxyConfig.backends, or an opaque URL. */
export interface PolicyEndpoint {
  readonly backendKey?: string;
  readonly url?: string;
}

/** Where a credential is read from (extraction) or written to. Exactly one member is set. */
export interface CredentialLocation {
  readonly header?: { readonly name: string; readonly prefix?: string };
  readonly queryParameter?: { readonly name: string };
  readonly cookie?: { readonly name: string };
  /** Extraction only: CEL over the request yielding the credential. */
  readonly expression?: string;
}

export type AuthorizationAction = 'Allow' | 'Deny' | 'Require';

export interface AuthorizationRule {
  readonly matchExpressions: readonly string[];
  readonly action: AuthorizationAction;
  readonly source: PolicySource;
}

/** Rules from every contributing policy, accumulated (SPEC.md "Authorization semantics"). */
export interface AuthorizationPolicy {
  readonly rules: readonly AuthorizationRule[];
}

export interface HeaderTransform {
  readonly set?: readonly { readonly name: string; readonly value: string }[];
  readonly add?: readonly { readonly name: string; readonly value: string }[];
  readonly remove?: readonly string[];
  /** CEL producing the new body. */
  readonly body?: string;
}

export interface TransformationPolicy {
  readonly request?: HeaderTransform;
  readonly response?: HeaderTransform;
}

export type AuthMode = 'Strict' | 'Optional' | 'Permissive';

export interface ApiKeyEntry {
  /** `<Secret or ConfigMap name>/<entry name>`: names the key in logs without revealing it. */
  readonly id: string;
  /** Lowercase hex sha256 of the key; the proxy hashes the presented key and looks it up. */
  readonly keyHash: string;
  readonly metadata?: Json;
}

export interface ApiKeyAuthenticationPolicy {
  readonly mode: AuthMode;
  /** Default: header Authorization with prefix `Bearer `. */
  readonly location: CredentialLocation;
  readonly keys: readonly ApiKeyEntry[];
}

export interface BasicAuthenticationPolicy {
  readonly mode: 'Strict' | 'Optional';
  readonly realm: string;
  /** Default: header Authorization with prefix `Basic `. */
  readonly location: CredentialLocation;
  /** Password-file lines `<user>:<hash>` (MD5 `$apr1$`, bcrypt, crypt, `{SHA}`), comments and blanks removed. */
  readonly users: readonly string[];
}

export interface JwtProvider {
  readonly issuer: string;
  /** Absent: any audience. */
  readonly audiences?: readonly string[];
  readonly jwks:
    | { readonly inline: string }
    | { readonly remote: PolicyEndpoint & { readonly jwksPath?: string; readonly cacheDurationMs: number } };
}

export interface JwtAuthenticationPolicy {
  readonly mode: AuthMode;
  readonly providers: readonly JwtProvider[];
  readonly location?: CredentialLocation;
  /** MCP OAuth discovery (`clientSecretRef` resolved to `clientSecret`). */
  readonly mcp?: JwtMcpPolicy;
}

/** A member that may instead be a conditional list: the first entry whose condition holds runs. */
export interface Conditional<T> {
  readonly conditional: readonly { readonly condition?: string; readonly policy: T }[];
}


export interface DirectResponsePolicy {
  readonly status?: number;
  readonly body?: string;
  readonly bodyExpression?: string;
  readonly headers?: readonly { readonly name: string; readonly value: string }[];
}

export interface TrafficPolicy {
  readonly transformation?: TransformationPolicy | Conditional<TransformationPolicy>;
  readonly extProc?: ExtProcPolicy | Conditional<ExtProcPolicy>;
  readonly extAuth?: ExtAuthPolicy | Conditional<ExtAuthPolicy>;
  /** `local` entries as written; `global` with its endpoint resolved. */
  readonly rateLimit?: RateLimitPolicy | Conditional<RateLimitPolicy>;
  /** As written (Gateway API HTTPCORSFilter fields, unchecked by the API schema). */
  readonly cors?: CorsPolicy;
  readonly csrf?: { readonly additionalOrigins?: readonly string[] };
  readonly headerModifiers?: HeaderModifiersPolicy;
  readonly hostRewrite?: { readonly mode: 'Auto' | 'None' };
  readonly timeouts?: { readonly requestMs?: number };
  /** As written (Gateway API HTTPRouteRetry fields, unchecked by the API schema). */
  readonly retry?: RetryPolicySpec;
  readonly authorization?: AuthorizationPolicy;
  readonly jwtAuthentication?: JwtAuthenticationPolicy;
  readonly basicAuthentication?: BasicAuthenticationPolicy;
  readonly apiKeyAuthentication?: ApiKeyAuthenticationPolicy;
  readonly directResponse?: DirectResponsePolicy | Conditional<DirectResponsePolicy>;
  /** `duration` is CEL (or a duration string / milliseconds, as SPEC.md allows). */
  readonly delay?: { readonly duration: string };
  readonly sources: MemberSources<TrafficMember>;
  /** Present when an invalid policy would apply here: fail closed. */
  readonly invalid?: readonly InvalidPolicy[];
}

export const TRAFFIC_MEMBERS = [
  'transformation', 'extProc', 'extAuth', 'rateLimit', 'cors', 'csrf', 'headerModifiers', 'hostRewrite', 'timeouts', 'retry',
  'authorization', 'jwtAuthentication', 'basicAuthentication', 'apiKeyAuthentication', 'directResponse', 'delay',
] as const;
export type TrafficMember = (typeof TRAFFIC_MEMBERS)[number];

export interface BackendTLSPolicy {
  /** Client certificate (Secret keys tls.crt, tls.key, optional ca.cert). */
  readonly mtlsCertificate?: { readonly certPem: string; readonly keyPem: string; readonly caPem?: string };
  /** CA bundle (key ca.crt) that verifies the server; system CAs when absent. Wins over mtls caPem. */
  readonly caCertificatePem?: string;
  readonly insecureSkipVerify?: 'All' | 'Hostname';
  readonly sni?: string;
  readonly verifySubjectAltNames?: readonly string[];
  readonly alpnProtocols?: readonly string[];
  readonly keyExchangeGroups?: readonly string[];
}

export interface BackendAuthPolicy {
  /** The credential value (from `key` or the resolved `secretRef`; `Bearer ` stripped from the default key). */
  readonly key?: string;
  readonly passthrough?: PassthroughAuth;
  /** cloudA/cloudB/cloudC/oauthTokenExchange/crossAppAccess/jwtSign with Secret references resolved. */
  readonly cloudA?: CloudAAuth;
  readonly cloudB?: CloudBAuth;
  readonly cloudC?: CloudCAuth;
  readonly oauthTokenExchange?: OAuthTokenExchangeAuth;
  readonly crossAppAccess?: CrossAppAccessAuth;
  readonly jwtSign?: JwtSignAuth;
  /** Default: header Authorization with prefix `Bearer `. */
  readonly location?: CredentialLocation;
  readonly credentials?: readonly { readonly location: CredentialLocation; readonly value: string }[];
}

export interface BackendPolicy {
  readonly tcp?: { readonly keepalive?: { readonly retries?: number; readonly timeMs?: number; readonly intervalMs?: number }; readonly connectTimeoutMs?: number };
  readonly tls?: BackendTLSPolicy;
  readonly http?: { readonly version?: 'HTTP1' | 'HTTP2'; readonly requestTimeoutMs?: number };
  readonly tunnel?: PolicyEndpoint;
  readonly auth?: BackendAuthPolicy;
  /** Passed through as written (SPEC.md BackendAI; CEL checked by the translator). */
  readonly ai?: AiPolicy;
  /** Lowered: authorization rules compiled, guardrail endpoints resolved to URLs. */
  readonly mcp?: McpPolicyIR;
  readonly transformation?: TransformationPolicy;
  readonly health?: {
    readonly unhealthyCondition?: string;
    readonly eviction?: { readonly durationMs?: number; readonly restoreHealth?: number; readonly consecutiveFailures?: number; readonly healthThreshold?: number };
  };
  readonly extAuth?: ExtAuthPolicy;
  readonly sources: MemberSources<BackendMember>;
  readonly invalid?: readonly InvalidPolicy[];
  /**
   * Effective policy per sub-backend (AI provider or MCP target name), complete: the members above
   * < policies whose targetRefs sectionName names it < the provider's or target's own inline
   * `policies`. Present for every sub-backend whose effective policy differs from the members
   * above; the proxy uses `subBackends[<name>] ?? <this policy without subBackends>`, no merging.
   */
  readonly subBackends?: Readonly<Record<string, BackendPolicy>>;
}

export const BACKEND_MEMBERS = ['tcp', 'tls', 'http', 'tunnel', 'auth', 'ai', 'mcp', 'transformation', 'health', 'extAuth'] as const;
export type BackendMember = (typeof BACKEND_MEMBERS)[number];

export interface FrontendPolicy {
  readonly tcp?: FrontendTcpPolicy;
  readonly networkAuthorization?: AuthorizationPolicy;
  readonly tls?: FrontendTlsPolicy;
  readonly http?: FrontendHttpPolicy;
  readonly proxyProtocol?: { readonly version: 'V1' | 'V2' | 'All'; readonly mode: 'Strict' | 'Optional' };
  readonly connect?: { readonly mode: 'Deny' | 'Route' | 'Tunnel' };
  readonly accessLog?: AccessLogPolicy;
  readonly tracing?: TracingPolicy;
  readonly metrics?: MetricsPolicy;
  readonly sources: MemberSources<FrontendMember>;
  readonly invalid?: readonly InvalidPolicy[];
}

export const FRONTEND_MEMBERS = ['tcp', 'networkAuthorization', 'tls', 'http', 'proxyProtocol', 'connect', 'accessLog', 'tracing', 'metrics'] as const;
export type FrontendMember = (typeof FRONTEND_MEMBERS)[number];
