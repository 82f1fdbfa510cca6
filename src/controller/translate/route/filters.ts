import type { HTTPHeader, HTTPHeaderFilter, HTTPPathModifier, HTTPRequestMirrorFilter, HTTPRouteFilter } from '../../../api/gateway/index.ts';
import type { Filter, HeaderModifier, HeaderValue, PathModifier, RouteMatch } from '../../../ir/types.ts';
import type { BackendResolver } from '../backend.ts';
import { isDict, isPort, isPresent, listOf } from '../read.ts';
import type { Problem } from '../status/conditions.ts';

export interface FiltersResult {
  readonly filters: readonly Filter[];
  readonly invalid: readonly string[];
  /** ResolvedRefs problems (mirror targets). */
  readonly refs: readonly Problem[];
}

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);
/** Filter types that may appear at most once in one list (the Gateway API allows repeats only for mirrors). */
const SINGLE = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite']);

/**
 * Translate a filter list. `matches` are the rule's (already translated) matches: ReplacePrefixMatch
 * only makes sense when every one of them is a PathPrefix match.
 */
export function translateFilters(specs: unknown, path: string, matches: readonly RouteMatch[], resolver: BackendResolver): FiltersResult {
  const invalid: string[] = [];
  const refs: Problem[] = [];
  const filters: Filter[] = [];
  const seen = new Set<string>();
  listOf<HTTPRouteFilter>(specs).forEach((spec, i) => {
    const at = `${path}[${i}]`;
    if (SINGLE.has(spec.type) && seen.has(spec.type)) invalid.push(`${at}: ${spec.type} may appear only once`);
    seen.add(spec.type);
    const ctx = { at, matches, invalid };
    switch (spec.type) {
      case 'RequestHeaderModifier':
        filters.push({ type: 'RequestHeaderModifier', ...headerModifier(spec.requestHeaderModifier, `${at}.requestHeaderModifier`, invalid) });
        break;
      case 'ResponseHeaderModifier':
        filters.push({ type: 'ResponseHeaderModifier', ...headerModifier(spec.responseHeaderModifier, `${at}.responseHeaderModifier`, invalid) });
        break;
      case 'RequestRedirect': {
        const f = redirect(spec, ctx);
        if (f) filters.push(f);
        break;
      }
      case 'URLRewrite': {
        const f = rewrite(spec, ctx);
        if (f) filters.push(f);
        break;
      }
      case 'RequestMirror': {
        const f = mirror(spec.requestMirror, at, invalid, refs, resolver);
        if (f) filters.push(f);
        break;
      }
      default:
        invalid.push(`${at}.type ${String(spec.type)} is not supported; supported filters are RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect, URLRewrite and RequestMirror`);
    }
  });
  if (seen.has('RequestRedirect') && seen.has('URLRewrite')) invalid.push(`${path}: RequestRedirect and URLRewrite cannot be used together`);
  // Kept in the IR per rule and per backend ref (20k at 10k routes): none is one shared frozen
  // array, and a list grown by push is kept at its length (~130 bytes unused otherwise).
  return { filters: filters.length === 0 ? NO_FILTERS : filters.slice(), invalid, refs };
}

const NO_FILTERS: readonly Filter[] = Object.freeze([]);

function headerModifier(spec: HTTPHeaderFilter | undefined, at: string, invalid: string[]): HeaderModifier {
  if (!isDict(spec)) invalid.push(`${at} is required`);
  const values = (list: unknown, field: string): HeaderValue[] =>
    listOf<HTTPHeader>(list).flatMap((h, i) => {
      if (typeof h.name === 'string' && h.name !== '' && typeof h.value === 'string') return [{ name: h.name, value: h.value }];
      invalid.push(`${at}.${field}[${i}] needs a name and a value`);
      return [];
    });
  const remove = Array.isArray(spec?.remove) ? spec.remove.filter((n): n is string => typeof n === 'string' && n !== '') : [];
  return { set: values(spec?.set, 'set'), add: values(spec?.add, 'add'), remove };
}

interface FilterContext { readonly at: string; readonly matches: readonly RouteMatch[]; readonly invalid: string[] }

function pathModifier(spec: HTTPPathModifier | undefined, at: string, ctx: FilterContext): PathModifier | undefined {
  if (spec === undefined) return undefined;
  if (!isDict(spec)) {
    ctx.invalid.push(`${at} must be an object`);
    return undefined;
  }
  if (spec.type === 'ReplaceFullPath' && typeof spec.replaceFullPath === 'string') return { type: 'ReplaceFullPath', value: spec.replaceFullPath };
  if (spec.type === 'ReplacePrefixMatch' && typeof spec.replacePrefixMatch === 'string') {
    // The default match (no matches) is PathPrefix `/`, so it qualifies.
    const nonPrefix = ctx.matches.findIndex((m) => m.path?.type !== 'PathPrefix');
    if (nonPrefix >= 0) {
      ctx.invalid.push(`${at}.type ReplacePrefixMatch requires PathPrefix matches, but match ${nonPrefix} of this rule is ${ctx.matches[nonPrefix].path?.type}`);
      return undefined;
    }
    return { type: 'ReplacePrefixMatch', value: spec.replacePrefixMatch };
  }
  ctx.invalid.push(`${at} needs type ReplaceFullPath with replaceFullPath, or ReplacePrefixMatch with replacePrefixMatch`);
  return undefined;
}

function redirect(spec: HTTPRouteFilter, ctx: FilterContext): Filter | undefined {
  const at = `${ctx.at}.requestRedirect`;
  const r = spec.requestRedirect;
  if (!isPresent(r)) {
    ctx.invalid.push(`${at} is required`);
    return undefined;
  }
  const statusCode = r.statusCode ?? 302;
  const before = ctx.invalid.length;
  if (!REDIRECT_CODES.has(statusCode)) ctx.invalid.push(`${at}.statusCode ${String(statusCode)} is not supported; use 301, 302, 303, 307 or 308`);
  if (r.scheme !== undefined && r.scheme !== 'http' && r.scheme !== 'https') ctx.invalid.push(`${at}.scheme must be http or https`);
  if (r.port !== undefined && !isPort(r.port)) ctx.invalid.push(`${at}.port must be an integer 1..65535`);
  const path = pathModifier(r.path, `${at}.path`, ctx);
  if (ctx.invalid.length > before) return undefined;
  return {
    type: 'RequestRedirect',
    statusCode: statusCode as 301,
    ...(r.scheme ? { scheme: r.scheme as 'http' | 'https' } : {}),
    ...(typeof r.hostname === 'string' && r.hostname ? { hostname: r.hostname } : {}),
    ...(path ? { path } : {}),
    ...(r.port !== undefined ? { port: r.port } : {}),
  };
}

function rewrite(spec: HTTPRouteFilter, ctx: FilterContext): Filter | undefined {
  const at = `${ctx.at}.urlRewrite`;
  const r = spec.urlRewrite;
  if (!isPresent(r)) {
    ctx.invalid.push(`${at} is required`);
    return undefined;
  }
  const before = ctx.invalid.length;
  const path = pathModifier(r.path, `${at}.path`, ctx);
  if (ctx.invalid.length > before) return undefined;
  return { type: 'URLRewrite', ...(typeof r.hostname === 'string' && r.hostname ? { hostname: r.hostname } : {}), ...(path ? { path } : {}) };
}

/** A mirror whose target does not resolve is dropped (and reported): mirroring never affects the response. */
function mirror(spec: HTTPRequestMirrorFilter | undefined, at: string, invalid: string[], refs: Problem[], resolver: BackendResolver): Filter | undefined {
  const path = `${at}.requestMirror`;
  if (!isDict(spec) || !isDict(spec.backendRef)) {
    invalid.push(`${path}.backendRef is required`);
    return undefined;
  }
  let percent: number | undefined;
  if (spec.percent !== undefined && spec.fraction !== undefined) invalid.push(`${path}: set percent or fraction, not both`);
  else if (spec.percent !== undefined) {
    if (!Number.isInteger(spec.percent) || spec.percent < 0 || spec.percent > 100) invalid.push(`${path}.percent must be an integer 0..100`);
    else percent = spec.percent;
  } else if (spec.fraction !== undefined) {
    const numerator = spec.fraction?.numerator;
    const denominator = spec.fraction?.denominator ?? 100;
    if (!Number.isInteger(numerator) || !Number.isInteger(denominator) || denominator <= 0 || numerator < 0 || numerator > denominator) {
      invalid.push(`${path}.fraction needs integers 0 <= numerator <= denominator and denominator > 0`);
    } else percent = (numerator / denominator) * 100;
  }
  const resolved = resolver.resolve(spec.backendRef, `${path}.backendRef`);
  if (resolved.problem) refs.push(resolved.problem);
  if (resolved.backendKey === null) return undefined;
  return { type: 'RequestMirror', backendKey: resolved.backendKey, ...(percent !== undefined ? { percent } : {}) };
}
