import type { Filter } from '../../ir/types.ts';
import type { CompiledBackend } from '../backends/backend.ts';
import { compileHeaderModifier, type CompiledHeaderModifier } from '../http/header-modifier.ts';
import type { RedirectFilter } from './redirect.ts';

export type URLRewriteFilter = Extract<Filter, { type: 'URLRewrite' }>;

export interface CompiledMirror {
  readonly backend: CompiledBackend;
  /** 0..100 */
  readonly percent: number;
}

/** A filter list resolved into what the request path needs, in application order. */
export interface CompiledFilters {
  readonly requestHeaders: readonly CompiledHeaderModifier[];
  readonly responseHeaders: readonly CompiledHeaderModifier[];
  readonly redirect: RedirectFilter | undefined;
  readonly rewrite: URLRewriteFilter | undefined;
  readonly mirrors: readonly CompiledMirror[];
}

export const NO_FILTERS: CompiledFilters = { requestHeaders: [], responseHeaders: [], redirect: undefined, rewrite: undefined, mirrors: [] };

export function compileFilters(
  filters: readonly Filter[],
  backendOf: (key: string) => CompiledBackend | undefined,
  onError: (message: string) => void,
): CompiledFilters {
  if (filters.length === 0) return NO_FILTERS;
  const requestHeaders: CompiledHeaderModifier[] = [];
  const responseHeaders: CompiledHeaderModifier[] = [];
  const mirrors: CompiledMirror[] = [];
  let redirect: RedirectFilter | undefined;
  let rewrite: URLRewriteFilter | undefined;
  for (const f of filters) {
    switch (f.type) {
      case 'RequestHeaderModifier':
        requestHeaders.push(compileHeaderModifier(f));
        break;
      case 'ResponseHeaderModifier':
        responseHeaders.push(compileHeaderModifier(f));
        break;
      case 'RequestRedirect':
        redirect ??= f;
        break;
      case 'URLRewrite':
        rewrite ??= f;
        break;
      case 'RequestMirror': {
        const backend = backendOf(f.backendKey);
        if (backend) mirrors.push({ backend, percent: Math.min(100, Math.max(0, f.percent ?? 100)) });
        else onError(`mirror backend ${f.backendKey} is not in the config`);
        break;
      }
    }
  }
  return { requestHeaders, responseHeaders, redirect, rewrite, mirrors };
}

/** Rule filters first, then the chosen backendRef's (the Gateway API's order). */
export function mergeFilters(rule: CompiledFilters, backend: CompiledFilters): CompiledFilters {
  if (backend === NO_FILTERS) return rule;
  if (rule === NO_FILTERS) return backend;
  return {
    requestHeaders: [...rule.requestHeaders, ...backend.requestHeaders],
    responseHeaders: [...rule.responseHeaders, ...backend.responseHeaders],
    redirect: rule.redirect ?? backend.redirect,
    rewrite: backend.rewrite ?? rule.rewrite,
    mirrors: [...rule.mirrors, ...backend.mirrors],
  };
}
