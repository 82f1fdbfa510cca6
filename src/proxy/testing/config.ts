import type { Backend, Bind, Listener, ProxyConfig, Route, RouteRule } from '../../ir/types.ts';

/** Small builders for hand-written IR in tests: defaults for everything a case does not care about. */

export function backend(key: string, ports: readonly number[], extra: Partial<Backend> = {}): Backend {
  return {
    key,
    kind: 'Service',
    namespace: 'default',
    name: key,
    endpoints: ports.map((port) => ({ host: '127.0.0.1', port })),
    rewriteHost: false,
    ...extra,
  };
}

export function rule(key: string, extra: Partial<RouteRule> = {}): RouteRule {
  return { key, matches: [], filters: [], backends: [], ...extra };
}

export function route(key: string, rules: readonly RouteRule[], extra: Partial<Route> = {}): Route {
  const [namespace, name] = key.split('/');
  return { key, namespace, name, creationTimestamp: '2024-01-01T00:00:00Z', rules, ...extra };
}

export function listener(section: string, routeKeys: readonly string[], extra: Partial<Listener> = {}): Listener {
  return {
    key: `default/gw/${section}`,
    gateway: { namespace: 'default', name: 'gw' },
    sectionName: section,
    hostname: null,
    protocol: 'HTTP',
    routes: routeKeys.map((routeKey) => ({ routeKey, hostnames: [] })),
    ...extra,
  };
}

export function bind(port: number, listeners: readonly Listener[], protocol: 'HTTP' | 'HTTPS' = 'HTTP'): Bind {
  return { key: `bind/${port}`, port, protocol, listeners };
}

export function config(parts: { binds: readonly Bind[]; routes: readonly Route[]; backends: readonly Backend[]; version?: string }): ProxyConfig {
  return {
    version: parts.version ?? 'v1',
    binds: parts.binds,
    routes: Object.fromEntries(parts.routes.map((r) => [r.key, r])),
    backends: Object.fromEntries(parts.backends.map((b) => [b.key, b])),
  };
}

/** One HTTP bind on IR port 80 with one catch-all listener serving `routes`. */
export function simpleConfig(routes: readonly Route[], backends: readonly Backend[], version = 'v1'): ProxyConfig {
  return config({ version, binds: [bind(80, [listener('http', routes.map((r) => r.key))])], routes, backends });
}
