/**
 * Hostname intersection between a listener and a route, as the Gateway API defines it: a wildcard
 * `*.example.com` matches any name with at least one more label (`a.example.com`,
 * `a.b.example.com`) but not `example.com`; wildcards may appear on both sides.
 */

function isWildcard(hostname: string): boolean {
  return hostname.startsWith('*.');
}

/** Does `name` (exact or wildcard) fall under the wildcard `pattern`? */
function coveredBy(name: string, pattern: string): boolean {
  const suffix = pattern.slice(1); // `.example.com`
  const label = isWildcard(name) ? name.slice(1) : name;
  return label.length > suffix.length && label.endsWith(suffix);
}

/** The hostname a request must carry to match both sides, or null when they cannot overlap. */
export function intersectHostname(listener: string | null, route: string): string | null {
  if (listener === null) return route;
  if (listener === route) return route;
  if (isWildcard(listener) && coveredBy(route, listener)) return route;
  if (isWildcard(route) && coveredBy(listener, route)) return listener;
  return null;
}

/**
 * The route's effective hostnames on a listener: [] when the route names no hostnames (every
 * host the listener accepts), null when it names some and none intersects.
 */
export function effectiveHostnames(listener: string | null, routeHostnames: readonly string[]): readonly string[] | null {
  // One frozen array for all: every attachment of a route without hostnames holds it (10k at 10k routes).
  if (routeHostnames.length === 0) return EVERY_HOST;
  const out = new Set<string>();
  for (const hostname of routeHostnames) {
    const match = intersectHostname(listener, hostname);
    if (match !== null) out.add(match);
  }
  return out.size === 0 ? null : [...out].sort();
}

const EVERY_HOST: readonly string[] = Object.freeze([]);

/** Sort order for listeners on one port: exact names, then wildcards by length (longest first), then no hostname. */
export function hostnameSpecificity(a: string | null, b: string | null): number {
  const rank = (h: string | null): number => (h === null ? 2 : isWildcard(h) ? 1 : 0);
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank;
  if (a === null || b === null) return 0;
  if (a.length !== b.length) return b.length - a.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
