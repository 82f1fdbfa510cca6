import { RE2JS } from 're2js';
import type { RouteMatch, ValueMatch } from '../../ir/types.ts';

/**
 * Route match conditions compiled once per config. Regular expressions use re2js (linear time,
 * RE2 syntax) and must match the whole value, as Envoy's safe_regex does.
 */

export interface RequestView {
  /** The path without the query string, as the client sent it. */
  readonly path: string;
  /** The raw query string without `?`, or '' */
  readonly query: string;
  readonly method: string;
  /** Lowercased names (node's IncomingHttpHeaders). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export type PathMatcher =
  | { readonly type: 'Exact'; readonly value: string }
  /** `prefix` is the value without a trailing slash ('' for `/`, which matches everything). */
  | { readonly type: 'PathPrefix'; readonly value: string; readonly prefix: string }
  | { readonly type: 'RegularExpression'; readonly value: string; readonly regex: RE2JS };

export interface ValueMatcher {
  readonly name: string;
  test(value: string | undefined): boolean;
}

export interface CompiledMatch {
  readonly path: PathMatcher;
  readonly method: string | undefined;
  readonly headers: readonly ValueMatcher[];
  readonly queryParams: readonly ValueMatcher[];
}

/** Shared by the matches without header or query conditions (most: one match a route, 10k routes). */
// Not frozen: a frozen array has another elements kind, and matches() walks these per request.
const NO_VALUES: readonly ValueMatcher[] = [];

/** Throws with a readable message when a regular expression does not compile. */
export function compileMatch(m: RouteMatch): CompiledMatch {
  return {
    path: compilePath(m.path ?? { type: 'PathPrefix', value: '/' }),
    method: m.method?.toUpperCase(),
    headers: m.headers === undefined || m.headers.length === 0 ? NO_VALUES : firstByName(m.headers.map((h) => ({ ...h, name: h.name.toLowerCase() }))).map(compileValue),
    queryParams: m.queryParams === undefined || m.queryParams.length === 0 ? NO_VALUES : firstByName(m.queryParams).map(compileValue),
  };
}

export function compilePath(p: NonNullable<RouteMatch['path']>): PathMatcher {
  switch (p.type) {
    case 'Exact':
      return { type: 'Exact', value: p.value };
    case 'PathPrefix':
      return { type: 'PathPrefix', value: p.value, prefix: trimTrailingSlashes(p.value) };
    case 'RegularExpression':
      return { type: 'RegularExpression', value: p.value, regex: compileRegex(p.value) };
  }
}

export function pathMatches(m: PathMatcher, path: string): boolean {
  switch (m.type) {
    case 'Exact':
      return path === m.value;
    case 'PathPrefix': {
      // Segment boundaries: `/foo` matches `/foo` and `/foo/bar`, never `/foobar`.
      const p = m.prefix;
      if (!path.startsWith(p)) return false;
      return path.length === p.length || path.charCodeAt(p.length) === 47 /* / */;
    }
    case 'RegularExpression':
      return m.regex.testExact(path);
  }
}

export function matches(m: CompiledMatch, req: RequestView, query: () => ReadonlyMap<string, string>): boolean {
  if (!pathMatches(m.path, req.path)) return false;
  if (m.method !== undefined && m.method !== req.method) return false;
  for (const h of m.headers) {
    const v = req.headers[h.name];
    if (!h.test(Array.isArray(v) ? v.join(',') : v)) return false;
  }
  if (m.queryParams.length > 0) {
    const q = query();
    for (const p of m.queryParams) if (!p.test(q.get(p.name))) return false;
  }
  return true;
}

/** First value per parameter name (names are case-sensitive, as the Gateway API says). */
export function parseQuery(raw: string): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  if (raw === '') return out;
  for (const [k, v] of new URLSearchParams(raw)) if (!out.has(k)) out.set(k, v);
  return out;
}

function compileValue(v: ValueMatch): ValueMatcher {
  if (v.type === 'Exact') {
    const expected = v.value;
    return { name: v.name, test: (value) => value === expected };
  }
  const regex = compileRegex(v.value);
  return { name: v.name, test: (value) => value !== undefined && regex.testExact(value) };
}

function compileRegex(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    throw new Error(`invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`, { cause: err });
  }
}

/** The Gateway API: only the first of several entries with the same name counts. */
function firstByName(list: readonly ValueMatch[]): ValueMatch[] {
  const seen = new Set<string>();
  return list.filter((v) => !seen.has(v.name) && (seen.add(v.name), true));
}

export function trimTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--;
  return path.slice(0, end);
}
