import type { CompiledMatch } from './matchers.ts';

/**
 * Match precedence, for entries that already share a hostname bucket (hostname specificity is
 * decided by the bucket order; see docs/paths.md for the whole order):
 *
 * 1. path type: Exact, then RegularExpression, then PathPrefix — Envoy Gateway's order (the Gateway
 *    API leaves RegularExpression's place to implementations), so a catch-all `/` prefix never
 *    shadows a regex route;
 * 2. the longer path value (prefix or pattern) first;
 * 3. a method match; 4. more header matches; 5. more query-param matches (Gateway API);
 * 6. the oldest route; 7. `namespace/name` alphabetically; 8. rule order, then match order.
 */
export interface RankedMatch {
  readonly match: CompiledMatch;
  /** Milliseconds since the epoch; unparseable timestamps sort last. */
  readonly routeCreated: number;
  readonly routeKey: string;
  readonly ruleIndex: number;
  readonly matchIndex: number;
}

const PATH_RANK = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;

export function comparePrecedence(a: RankedMatch, b: RankedMatch): number {
  const pa = a.match.path;
  const pb = b.match.path;
  return (
    PATH_RANK[pa.type] - PATH_RANK[pb.type] ||
    pathLength(b.match) - pathLength(a.match) ||
    Number(b.match.method !== undefined) - Number(a.match.method !== undefined) ||
    b.match.headers.length - a.match.headers.length ||
    b.match.queryParams.length - a.match.queryParams.length ||
    a.routeCreated - b.routeCreated ||
    (a.routeKey < b.routeKey ? -1 : a.routeKey > b.routeKey ? 1 : 0) ||
    a.ruleIndex - b.ruleIndex ||
    a.matchIndex - b.matchIndex
  );
}

function pathLength(m: CompiledMatch): number {
  return m.path.type === 'PathPrefix' ? m.path.prefix.length : m.path.value.length;
}

export function parseCreated(timestamp: string): number {
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? Number.MAX_SAFE_INTEGER : t;
}
