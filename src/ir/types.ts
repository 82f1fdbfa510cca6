/**
 * The IR: what the control plane hands the data plane. Plain, JSON-serialisable, readonly data
 * with no Kubernetes types in it. The translator produces it; the proxy runtime compiles it.
 *
 * Keys are stable strings so a config swap can tell what changed and the metrics can name things:
 *   listener  `<gwNamespace>/<gwName>/<sectionName>`
 *   route     `<namespace>/<name>`            rule `<routeKey>/rule/<index>`
 *   backend   `service/<ns>/<name>:<port>` | `backend/<ns>/<name>` (ProxyBackend)
 */

import type { BackendPolicy, FrontendPolicy, TrafficPolicy } from './policy.ts';

export interface ProxyConfig {
  /** Content hash of everything below: equal versions mean equal config. */
  readonly version: string;
  readonly binds: readonly Bind[];
  readonly routes: Readonly<Record<string, Route>>;
  readonly backends: Readonly<Record<string, Backend>>;
}

/** One listening port shared by every listener that names it. */
export interface Bind {
  readonly key: string;
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  /** Most specific hostname first; the runtime picks the first listener whose hostname matches. */
  readonly listeners: readonly Listener[];
  /** Effective frontend policy of the Gateways listening here (src/ir/policy.ts). */
  readonly frontend?: FrontendPolicy;
}

export interface Listener {
  readonly key: string;
  readonly gateway: { readonly namespace: string; readonly name: string };
  readonly sectionName: string;
  /** Exact (`a.example.com`) or wildcard (`*.example.com`); null matches any host. */
  readonly hostname: string | null;
  readonly protocol: 'HTTP' | 'HTTPS';
  /** Present for HTTPS listeners (TLS mode Terminate). */
  readonly tls?: ListenerTLS;
  /** Routes attached to this listener, each with the hostnames it serves here (already intersected). */
  readonly routes: readonly RouteAttachment[];
  /** Effective PreRouting traffic policy (Gateway < Listener), run before route selection. */
  readonly preRouting?: TrafficPolicy;
  /**
   * The Gateway's MCP session key (64 hex characters, Secret data): the controller-managed Secret
   * `<gateway>-session-key` (docs/kubernetes.md "Session keys"). Absent: the proxy's own key.
   */
  readonly sessionKey?: string;
}

export interface ListenerTLS {
  /** PEM certificate chains with their keys; the first is the default for this listener. */
  readonly certificates: readonly { readonly certPem: string; readonly keyPem: string }[];
}

export interface RouteAttachment {
  readonly routeKey: string;
  /** Effective hostnames for this listener; empty means every host the listener accepts. */
  readonly hostnames: readonly string[];
}

export interface Route {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** Creation time (RFC 3339) and rule order feed the Gateway API's precedence tie-breaks. */
  readonly creationTimestamp: string;
  readonly rules: readonly RouteRule[];
}

export interface RouteRule {
  readonly key: string;
  /** The rule's `name`, which a policy's sectionName can target. */
  readonly name?: string;
  /** Empty means the single default match: PathPrefix `/`. */
  readonly matches: readonly RouteMatch[];
  readonly filters: readonly Filter[];
  /** Empty with no redirect/direct filter means 500 (the Gateway API's rule for rules without valid backends). */
  readonly backends: readonly WeightedBackend[];
  readonly timeouts?: { readonly requestMs?: number; readonly backendRequestMs?: number };
  /** Effective PostRouting traffic policy (Gateway < Listener < Route < Rule). */
  readonly traffic?: TrafficPolicy;
  /** Instead of `traffic` when the listeners this route is attached to see different policies: by listener key. */
  readonly trafficByListener?: Readonly<Record<string, TrafficPolicy>>;
}

export interface RouteMatch {
  readonly path?: { readonly type: 'Exact' | 'PathPrefix' | 'RegularExpression'; readonly value: string };
  readonly headers?: readonly ValueMatch[];
  readonly queryParams?: readonly ValueMatch[];
  readonly method?: string;
}

export interface ValueMatch {
  readonly type: 'Exact' | 'RegularExpression';
  /** Header names are lowercased by the translator; query parameter names are kept as written. */
  readonly name: string;
  readonly value: string;
}

export interface WeightedBackend {
  /** null when the reference is invalid: requests that pick it get 500, as the Gateway API asks. */
  readonly backendKey: string | null;
  readonly weight: number;
  readonly filters: readonly Filter[];
  /** Effective backend policy for this rule × backend (… < Rule < Service/ProxyBackend < inline). */
  readonly backendPolicy?: BackendPolicy;
  /** Instead of `backendPolicy` when the route's listeners see different policies: by listener key. */
  readonly backendPolicyByListener?: Readonly<Record<string, BackendPolicy>>;
}

export interface HeaderValue { readonly name: string; readonly value: string }

export interface HeaderModifier {
  readonly set: readonly HeaderValue[];
  readonly add: readonly HeaderValue[];
  readonly remove: readonly string[];
}

export type PathModifier =
  | { readonly type: 'ReplaceFullPath'; readonly value: string }
  | { readonly type: 'ReplacePrefixMatch'; readonly value: string };

export type Filter =
  | ({ readonly type: 'RequestHeaderModifier' } & HeaderModifier)
  | ({ readonly type: 'ResponseHeaderModifier' } & HeaderModifier)
  | {
      readonly type: 'RequestRedirect';
      readonly scheme?: 'http' | 'https';
      readonly hostname?: string;
      readonly path?: PathModifier;
      readonly port?: number;
      readonly statusCode: 301 | 302 | 303 | 307 | 308;
    }
  | { readonly type: 'URLRewrite'; readonly hostname?: string; readonly path?: PathModifier }
  /** percent is 0..100 (a fraction is converted by the translator); absent means 100. */
  | { readonly type: 'RequestMirror'; readonly backendKey: string; readonly percent?: number };

import type { AiBackendIR } from './ai.ts';
import type { McpBackendIR } from './mcp.ts';
import type { DynamicForwardIR } from './dynamic-forward.ts';
import type { AgentRuntimeIR } from './agent-runtime.ts';

export interface Backend {
  readonly key: string;
  readonly kind: 'Service' | 'ProxyBackend';
  readonly namespace: string;
  readonly name: string;
  /** Where requests go. Empty means no ready endpoint: 503. */
  readonly endpoints: readonly Endpoint[];
  /** The Service port's appProtocol, kept for protocol selection (`kubernetes.io/h2c`, `grpc` …). */
  readonly appProtocol?: string;
  /** Set Host to the destination (hostname-based backends) instead of passing the client's through. */
  readonly rewriteHost: boolean;
  /** An MCP backend: the proxy's MCP handler serves it (its targets carry their own addresses). */
  readonly mcp?: McpBackendIR;
  /** An AI backend: the proxy's LLM handler serves it (its providers carry their own addresses). */
  readonly ai?: AiBackendIR;
  /** An A2A agent: forwarded to `endpoints` like a static host, its agent card rewritten to name the gateway (src/proxy/a2a). */
  readonly a2a?: A2aBackendIR;
  /** A dynamic forward proxy: the proxy's forward handler serves it (destinations come from each request). */
  readonly dynamicForward?: DynamicForwardIR;
  /** A cloud-A agent runtime: the proxy's agent-runtime handler invokes it (its endpoint comes from the region). */
  readonly agentRuntime?: AgentRuntimeIR;
  /**
   * Set on a backend a policy names as its external service (extAuth, rate-limit service, JWKS,
   * extProc, OTLP, tunnel, token endpoint, guardrail, webhook): the `tcp`, `tls` and `http` members
   * of the backend policies attached to this Service or ProxyBackend itself (no Gateway, route or
   * rule policy applies to a call a policy makes), with which the proxy reaches its endpoints.
   */
  readonly connection?: BackendConnectionPolicy;
}

/**
 * How calls a policy makes reach a backend's endpoints (a subset of BackendPolicy). `invalid`: a
 * backend policy attached to the Service or ProxyBackend did not translate, so its external
 * service is not called (the policy that names it fails closed).
 */
export type BackendConnectionPolicy = Pick<BackendPolicy, 'tcp' | 'tls' | 'http' | 'invalid'>;

/** What an A2A backend adds to a forwarded one. */
export interface A2aBackendIR {
  /** The paths whose answers are agent cards (v0.3 / v1.0 `agent-card.json`, the older `agent.json`). */
  readonly cardPaths: readonly string[];
}

export interface Endpoint {
  /** An IP address or a DNS name. */
  readonly host: string;
  readonly port: number;
}
