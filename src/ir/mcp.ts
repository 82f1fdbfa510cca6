/**
 * The IR of an MCP backend (ProxyBackend `spec.mcp` plus its `policies.mcp`): what the
 * translator resolves (targets to concrete addresses, defaults applied) and what the proxy's
 * MCP handler (src/proxy/mcp) serves. Plain, JSON-serialisable, readonly data.
 */

import type { BackendPolicy } from './policy.ts';
import type { Endpoint } from './types.ts';

export type McpTransport = 'StreamableHTTP' | 'SSE';
export type McpSessionRouting = 'Stateful' | 'Stateless';
export type McpFailureMode = 'FailClosed' | 'FailOpen';
export type McpPrefixMode = 'Conditional' | 'Always' | 'Never';

/** One upstream MCP server. */
export interface McpTargetIR {
  /**
   * Prefixes tool and prompt names (`<name>_<tool>`) and resource URIs (`<name>+<uri>`).
   * A static target keeps its `name`; a selector target is named `<name>-<service>-<port>`.
   */
  readonly name: string;
  /**
   * Selector targets: the `targets[]` entry name they were selected by. A policy whose targetRefs
   * sectionName is that name applies to each of them (one with the target's own name wins).
   */
  readonly section?: string;
  /**
   * A DNS name or IP address. Service targets use the Service's cluster DNS name; it is also the
   * TLS SNI and the Host header when `endpoints` are used.
   */
  readonly host: string;
  readonly port: number;
  /**
   * Service targets: the ready endpoints of the Service port (from its EndpointSlices). When
   * present, the proxy connects to one of them instead of `host:port`, and a Stateful session
   * stays pinned to the endpoint its upstream session was opened on. Absent (no ready endpoint,
   * ExternalName, host targets): `host:port` is used.
   */
  readonly endpoints?: readonly Endpoint[];
  /** Default `/mcp` for StreamableHTTP, `/sse` for SSE. */
  readonly path: string;
  readonly protocol: McpTransport;
  /**
   * The target's own `policies` (BackendSimple: tcp, tls, http, tunnel, auth; host targets only),
   * lowered exactly as a policy object's backend members, Secrets resolved. The translator merges
   * them into the route's backend policy: `WeightedBackend.backendPolicy.subBackends[<name>]` is
   * this target's effective policy (policy objects < the ProxyBackend's inline `spec.policies` <
   * policies whose targetRefs sectionName names the target < these). The proxy reads that; these
   * are used as they are only when a handler is driven without a route (no backend policy at all).
   * A `tls` member in the effective policy makes the target HTTPS.
   */
  readonly policies?: BackendPolicy;
}

export type McpAuthorizationAction = 'Allow' | 'Deny' | 'Require';

/** SPEC.md "Authorization semantics"; evaluated per item (list) or per call/get/read. */
export interface McpAuthorizationRule {
  readonly action: McpAuthorizationAction;
  /** CEL expressions; all must be true for the rule to match. `mcp.*` variables describe the item. */
  readonly matchExpressions: readonly string[];
}

/** Which messages of a method a guardrail processor sees. */
export type McpGuardrailPhase = 'Off' | 'Request' | 'Response' | 'Full';

/** One `policies.mcp.guardrails.processors[]` entry: a remote processor speaking proto/mcp/guardrail.proto. */
export interface McpGuardrailIR {
  /** gRPC base URL, `http(s)://host:port` (a Service backendRef: its first ready endpoint, else its cluster DNS name); '' when it did not resolve (always unavailable). */
  readonly url: string;
  /**
   * A Service backendRef written in a ProxyPolicy or inline policy: its backend (a key of
   * ProxyConfig.backends). The proxy then spreads the calls over the backend's ready endpoints with
   * the TLS of the Service's own backend policies, following EndpointSlice changes; `url` is the
   * fallback when the backend has no ready endpoint (its cluster DNS name).
   */
  readonly backendKey?: string;
  /** FailClosed (default): an unreachable or failing processor rejects the message; FailOpen lets it through. */
  readonly failureMode: McpFailureMode;
  /** Name → CEL expression, evaluated per message and sent as metadata. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Lowercased; empty or absent forwards every header. */
  readonly allowedRequestHeaders?: readonly string[];
  /** Lowercased; never forwarded. */
  readonly disallowedRequestHeaders?: readonly string[];
  /** Method pattern (exact, `tools/*`, `*\/list`, `*`) → phase; the most specific match wins. */
  readonly methods: Readonly<Record<string, McpGuardrailPhase>>;
}

/**
 * The backend policy member `mcp` (SPEC.md BackendMCP) in IR shape, from a ProxyPolicy's
 * `backend.mcp` or a ProxyBackend's inline `spec.policies.mcp`: merged like every backend member
 * (whole member, most specific wins), so `BackendPolicy.mcp` is the request's effective MCP policy
 * and `subBackends[<target>].mcp` a target's. The deprecated `authentication` is not here: the
 * translator maps the inline one to a traffic jwtAuthentication.
 */
export interface McpPolicyIR {
  /** Absent or empty allows everything. */
  readonly authorization?: readonly McpAuthorizationRule[];
  /** In order; the first to reject short-circuits. */
  readonly guardrails?: readonly McpGuardrailIR[];
}

export interface McpBackendIR {
  /** The IR backend key (`backend/<ns>/<name>`); binds sessions to this backend. */
  readonly key: string;
  readonly targets: readonly McpTargetIR[];
  readonly sessionRouting: McpSessionRouting;
  readonly failureMode: McpFailureMode;
  readonly prefixMode: McpPrefixMode;
  /** `serverInfo.name` of the merged initialize result; default `switchboard`. */
  readonly serverName?: string;
  /**
   * From the inline `policies.mcp.authorization`; absent or empty allows everything. A request
   * routed with a backend policy uses that policy's `mcp` (and its targets' `subBackends[].mcp`)
   * instead: the translator has already merged this one into it.
   */
  readonly authorization?: readonly McpAuthorizationRule[];
  /** From the inline `policies.mcp.guardrails.processors`, in order; replaced like `authorization`. */
  readonly guardrails?: readonly McpGuardrailIR[];
}
