/**
 * MCP OAuth discovery requests in the lifecycle's route phase (docs/mcp.md "OAuth").
 *
 * The discovery paths sit outside the MCP route (PathPrefix `/mcp` never sees
 * `/.well-known/oauth-protected-resource/mcp`, RFC 9728 §3.1 / RFC 8414 §3.1), so they are routed
 * by their resource path: the path after the well-known prefix is matched against the listener's
 * route table exactly as the MCP request would be (a POST with this request's headers, after
 * PreRouting changed them). When the rule it selects runs a jwtAuthentication with `mcp`, that
 * route answers: its traffic policy runs up to the jwtAuthentication step (CORS and CSRF come
 * first, so a cross-origin browser client gets the route's CORS answer), and the step answers the
 * document instead of asking for a token — discovery is what a client without a token reads.
 * Anything else is routed as an ordinary request, so a route of the application's own for these
 * paths keeps working.
 */
import type { CompiledBind } from '../compile/config.ts';
import type { HeaderMap } from '../http/headers.ts';
import { parseOAuthPath, WELL_KNOWN, type OAuthDocument } from '../policies/traffic/jwt-authentication/oauth-resource/paths.ts';
import type { McpOAuthResource, ResourceAddress } from '../policies/traffic/jwt-authentication/oauth-resource/resource.ts';
import { isMcpOAuthStep } from '../mcp/oauth/well-known.ts';
import type { CompiledTrafficPolicy } from '../policies/chain.ts';
import type { RoutedRequest } from '../policies/request-context.ts';
import { requestHost, selectListener, splitTarget, type IncomingView } from './resolve.ts';

/** A discovery request routed to the MCP route of its resource. */
export interface McpDiscovery {
  readonly kind: 'mcp-discovery';
  /** The request as the route's policies see it: the well-known path as sent, the route's labels. */
  readonly request: RoutedRequest;
  /** The route's traffic policy up to its jwtAuthentication step (its invalid policies included: they fail closed here too). */
  readonly before: CompiledTrafficPolicy;
  readonly resource: McpOAuthResource;
  readonly document: OAuthDocument;
  readonly address: ResourceAddress;
}

/**
 * The discovery route of this request, or undefined when it is not a discovery request the
 * gateway serves (then it is routed as usual). Every other request costs one prefix comparison.
 */
export function resolveMcpDiscovery(bind: CompiledBind, view: IncomingView): McpDiscovery | undefined {
  if (!view.url.startsWith(WELL_KNOWN)) return undefined;
  const target = splitTarget(view.url);
  const parsed = target && parseOAuthPath(target.path);
  if (!target || !parsed) return undefined;
  const rawAuthority = view.headers[':authority'] ?? view.headers.host;
  // The documents name the resource by the authority the client used: without one there is nothing to name.
  if (typeof rawAuthority !== 'string' || rawAuthority === '') return undefined;
  const host = requestHost(view.headers);
  const selected = selectListener(bind, view, host);
  if ('error' in selected) return undefined;
  const listener = selected.listener;
  const entry = listener.routes.match(host, { path: parsed.resourcePath, query: '', method: 'POST', headers: view.headers });
  const traffic = entry?.rule.trafficFor(listener.key);
  if (!entry || !traffic) return undefined;
  const step = traffic.steps.find(isMcpOAuthStep);
  if (!step) return undefined;
  const index = traffic.steps.indexOf(step);
  return {
    kind: 'mcp-discovery',
    request: {
      clientPath: target.path,
      query: target.query,
      host,
      headers: { ...view.headers } as HeaderMap,
      labels: { gateway: listener.gateway, listener: listener.sectionName, route: entry.routeKey, backend: '' },
    },
    before: { ...traffic, steps: traffic.steps.slice(0, index) },
    resource: step.mcpOAuth,
    document: parsed.document,
    address: { origin: `${view.scheme}://${rawAuthority}`, path: parsed.resourcePath },
  };
}
