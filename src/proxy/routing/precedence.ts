import type { CompiledMatch } from './matchers.ts';

/**
 * The Gateway API's HTTPRoute match precedence, for entries that already share a hostname bucket
 * (hostname specificity is decided by the bucket order): Exact path > longest PathPrefix >
 * RegularExpression (longer pattern first, our choice); then a method match; then most header
 * matches; then most query-param matches; then the oldest route; then `namespace/name`
 * alphabetically; then rule order and match order.
 */
export interface RankedMatch {
  readonly match: CompiledMatch;
  /** Milliseconds since the epoch; unparseable timestamps sort last. */
  readonly routeCreated: number;
  readonly routeKey: string;
  readonly ruleIndex: number;
  readonly matchIndex: number;
}

const PATH_RANK = { Exact: 0, PathPrefix: 1, RegularExpression: 2 } as const;

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
