import type { IncomingHttpHeaders } from 'node:http';
import type { CompiledBackend, UpstreamTarget } from '../backends/backend.ts';
import type { ClientFormatOf } from '../backends/client-format.ts';
import type { CompiledBind, CompiledListener } from '../compile/config.ts';
import type { CompiledRule } from '../compile/rule.ts';
import type { ProxyError } from '../http/errors.ts';
import type { CompiledFilters } from '../filters/compile.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import type { CompiledTrafficPolicy } from '../policies/chain.ts';
import type { CompiledBackendPolicy } from '../policies/backend/compile.ts';
import { applyHeaderModifier } from '../http/header-modifier.ts';
import { modifyPath } from '../filters/path-modifier.ts';
import { redirectLocation } from '../filters/redirect.ts';
import { addForwardedHeaders, endToEndHeaders, type HeaderMap } from '../http/headers.ts';
import { normalizeHost } from '../routing/host.ts';
import type { RequestLabels } from '../telemetry/metrics.ts';

/** What the routing step needs from a request, whichever protocol carried it. */
export interface IncomingView {
  readonly method: string;
  /** Origin-form target (`/path?query`); absolute-form is accepted too. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string | undefined;
  /** TLS server name, when the connection had one. */
  readonly sni: string | undefined;
  readonly scheme: 'http' | 'https';
}

export type Resolution =
  | { readonly kind: 'error'; readonly error: ProxyError; readonly labels: RequestLabels }
  | { readonly kind: 'redirect'; readonly status: number; readonly location: string; readonly labels: RequestLabels }
  | {
      readonly kind: 'forward';
      readonly labels: RequestLabels;
      readonly rule: CompiledRule;
      readonly backend: CompiledBackend;
      /** null when the backend has an in-process handler instead of endpoints. */
      readonly target: UpstreamTarget | null;
      readonly filters: CompiledFilters;
      /** Upstream request target, after URLRewrite. */
      readonly path: string;
      /** Upstream request headers, after hop-by-hop removal, X-Forwarded-* and header filters. */
      readonly headers: HeaderMap;
      /** The traffic policy to run before forwarding (undefined: none). */
      readonly traffic: CompiledTrafficPolicy | undefined;
      /** The effective backend policy (IR form) for the chosen backend on this listener. */
      readonly backendPolicy: BackendPolicy | undefined;
      /** The same policy compiled: credentials, health feedback, response deadline (upstream forwards only). */
      readonly backendRuntime: CompiledBackendPolicy | undefined;
      /** The format gateway errors are rendered in for this rule × backend (fixed at config time). */
      readonly clientFormat: ClientFormatOf;
      /** Host as the client sent it (port stripped, lowercased) and the query, for policies. */
      readonly host: string;
      readonly query: string;
      readonly clientPath: string;
    };

/**
 * Listener → route → filters → backend, on the compiled bind the request captured. Pure except for
 * the weighted/round-robin choices; it never touches the network.
 */
export function resolveRequest(bind: CompiledBind, req: IncomingView): Resolution {
  const rawAuthority = req.headers[':authority'] ?? req.headers.host;
  const authority = typeof rawAuthority === 'string' ? rawAuthority : undefined;
  const host = normalizeHost(authority);
  const labels = { gateway: '', listener: '', route: '', backend: '' };
  const selected = selectListener(bind, req, host);
  if ('error' in selected) return { kind: 'error', error: selected.error, labels };
  const listener = selected.listener;
  labels.gateway = listener.gateway;
  labels.listener = listener.sectionName;

  const target = originForm(req.url);
  if (target === undefined) return { kind: 'error', error: { code: 'BAD_REQUEST', reason: 'invalid request target' }, labels };
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = q < 0 ? '' : target.slice(q + 1);

  const entry = listener.routes.match(host, { path, query, method: req.method, headers: req.headers });
  if (!entry) return { kind: 'error', error: { code: 'ROUTE_NOT_FOUND' }, labels };
  labels.route = entry.routeKey;
  const rule = entry.rule;

  const redirectOf = (filters: CompiledFilters): Resolution | undefined => {
    if (!filters.redirect) return undefined;
    const location = redirectLocation(filters.redirect, { scheme: req.scheme, host, listenerPort: bind.irPort, path, query }, entry.match.path);
    return { kind: 'redirect', status: filters.redirect.statusCode, location, labels };
  };
  const ruleRedirect = redirectOf(rule.filters);
  if (ruleRedirect) return ruleRedirect;

  const pick = rule.backends.pick();
  if (!pick) return { kind: 'error', error: { code: 'NO_VALID_BACKEND', rule: rule.key }, labels };
  const backendRedirect = redirectOf(pick.filters);
  if (backendRedirect) return backendRedirect;
  if (!pick.backend) return { kind: 'error', error: { code: 'NO_VALID_BACKEND', rule: rule.key }, labels };
  const backend = pick.backend;
  labels.backend = backend.key;
  const backendRuntime = pick.compiledPolicyFor(listener.key);
  // A backend policy may pick its own endpoints (other TLS/HTTP settings, passive health).
  const upstream = backend.handler ? null : (backendRuntime?.pickTarget() ?? backend.endpoints.next());
  if (upstream === undefined) return { kind: 'error', error: { code: 'NO_HEALTHY_ENDPOINT', backend: backend.key }, labels };

  const filters = pick.filters;
  const rewrite = filters.rewrite;
  const upstreamPath = rewrite?.path ? modifyPath(path, rewrite.path, entry.match.path) : path;
  const headers = endToEndHeaders(req.headers);
  const upstreamHost = rewrite?.hostname ?? (backend.rewriteHost && upstream ? upstream.authority : authority);
  if (upstreamHost !== undefined) headers.host = upstreamHost;
  addForwardedHeaders(headers, req.remoteAddress, req.scheme, authority);
  for (const m of filters.requestHeaders) applyHeaderModifier(headers, m, 'request');

  return {
    kind: 'forward',
    labels,
    rule,
    backend,
    target: upstream,
    filters,
    path: query === '' ? upstreamPath : `${upstreamPath}?${query}`,
    headers,
    traffic: rule.trafficFor(listener.key),
    backendPolicy: pick.backendPolicyFor(listener.key),
    backendRuntime,
    clientFormat: pick.clientFormatFor(listener.key),
    host,
    query,
    clientPath: path,
  };
}

/**
 * The listener a request belongs to: by SNI on TLS, else by Host. A request whose Host selects
 * another listener than its SNI did is misdirected (HTTP/2 connection coalescing).
 */
export function selectListener(bind: CompiledBind, req: IncomingView, host: string): { listener: CompiledListener } | { error: ProxyError } {
  const sni = req.sni !== undefined ? normalizeHost(req.sni) : undefined;
  const listener = bind.listeners.lookup(sni ?? host);
  if (!listener) return { error: { code: 'LISTENER_NOT_FOUND', host } };
  if (sni !== undefined && host !== '' && host !== sni && bind.listeners.lookup(host) !== listener) {
    return { error: { code: 'MISDIRECTED_REQUEST', host, sni } };
  }
  return { listener };
}

/** The Host a request names (`:authority` on HTTP/2), normalised for listener and route lookup. */
export function requestHost(headers: IncomingHttpHeaders): string {
  const raw = headers[':authority'] ?? headers.host;
  return normalizeHost(typeof raw === 'string' ? raw : undefined);
}

/** Path and query of a request target (origin- or absolute-form); undefined when invalid. */
export function splitTarget(url: string): { path: string; query: string } | undefined {
  const target = originForm(url);
  if (target === undefined) return undefined;
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/** `/p?q` as is; `http://h/p?q` (absolute-form) reduced to its path and query; anything else is invalid. */
function originForm(url: string): string | undefined {
  if (url.charCodeAt(0) === 47 /* / */) return url;
  if (url.startsWith('http://') || url.startsWith('https://')) {
    try {
      const parsed = new URL(url);
      return parsed.pathname + parsed.search;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
