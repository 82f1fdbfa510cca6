import { RE2JS } from 're2js';
import type { HTTPRouteMatch, HTTPValueMatch } from '../../../api/gateway/index.ts';
import type { RouteMatch, ValueMatch } from '../../../ir/types.ts';
import { isDict, listOf } from '../read.ts';

export interface MatchesResult {
  readonly matches: readonly RouteMatch[];
  /** UnsupportedValue messages, each naming its field. */
  readonly invalid: readonly string[];
}

/** Regexes run on request data, so they must compile as RE2 (linear time) at translate time. */
export function re2Error(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Translate a rule's matches; a match without a path gets the Gateway API default PathPrefix `/`. */
export function translateMatches(specs: unknown, path: string): MatchesResult {
  const invalid: string[] = [];
  const matches = listOf<HTTPRouteMatch>(specs).map((spec, i) => translateMatch(spec, `${path}[${i}]`, invalid));
  return { matches, invalid };
}

function translateMatch(spec: HTTPRouteMatch, path: string, invalid: string[]): RouteMatch {
  const pathSpec = isDict(spec.path) ? spec.path : {};
  const type = pathSpec.type ?? 'PathPrefix';
  const value = typeof pathSpec.value === 'string' ? pathSpec.value : '/';
  if (type === 'RegularExpression') {
    const error = re2Error(value);
    if (error) invalid.push(`${path}.path.value is not a valid RE2 regular expression: ${error}`);
  } else if (type === 'Exact' || type === 'PathPrefix') {
    if (!value.startsWith('/')) invalid.push(`${path}.path.value must start with "/"`);
  } else {
    invalid.push(`${path}.path.type ${String(type)} is not supported; use Exact, PathPrefix or RegularExpression`);
  }
  const out: { -readonly [K in keyof RouteMatch]: RouteMatch[K] } = { path: { type: type as 'Exact', value } };
  const headers = valueMatches(spec.headers, `${path}.headers`, invalid, true);
  if (headers.length > 0) out.headers = headers;
  const queryParams = valueMatches(spec.queryParams, `${path}.queryParams`, invalid, false);
  if (queryParams.length > 0) out.queryParams = queryParams;
  if (typeof spec.method === 'string' && spec.method) out.method = spec.method.toUpperCase();
  return out;
}

/** Header names are case-insensitive (lowercased); repeated names keep the first entry, as the Gateway API says. */
function valueMatches(specs: unknown, path: string, invalid: string[], lowercase: boolean): ValueMatch[] {
  const out: ValueMatch[] = [];
  const seen = new Set<string>();
  listOf<HTTPValueMatch>(specs).forEach((spec, i) => {
    if (typeof spec.name !== 'string' || spec.name === '' || typeof spec.value !== 'string') {
      invalid.push(`${path}[${i}] needs a name and a value`);
      return;
    }
    const name = lowercase ? spec.name.toLowerCase() : spec.name;
    const type = spec.type ?? 'Exact';
    if (type !== 'Exact' && type !== 'RegularExpression') {
      invalid.push(`${path}[${i}].type ${String(type)} is not supported; use Exact or RegularExpression`);
      return;
    }
    if (type === 'RegularExpression') {
      const error = re2Error(spec.value);
      if (error) invalid.push(`${path}[${i}].value is not a valid RE2 regular expression: ${error}`);
    }
    if (seen.has(name)) return;
    seen.add(name);
    out.push({ type, name, value: spec.value });
  });
  return out;
}
