import type { KubeObject } from './object.ts';
import type { BackendObjectReference, ParentReference } from './common.ts';

export interface HTTPPathMatch {
  type?: 'Exact' | 'PathPrefix' | 'RegularExpression';
  value?: string;
}

export interface HTTPValueMatch {
  type?: 'Exact' | 'RegularExpression';
  name: string;
  value: string;
}

export interface HTTPRouteMatch {
  path?: HTTPPathMatch;
  headers?: HTTPValueMatch[];
  queryParams?: HTTPValueMatch[];
  method?: string;
}

export interface HTTPHeader { name: string; value: string }

export interface HTTPHeaderFilter {
  set?: HTTPHeader[];
  add?: HTTPHeader[];
  remove?: string[];
}

export interface HTTPPathModifier {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

export interface HTTPRequestRedirectFilter {
  scheme?: string;
  hostname?: string;
  path?: HTTPPathModifier;
  port?: number;
  statusCode?: number;
}

export interface HTTPURLRewriteFilter {
  hostname?: string;
  path?: HTTPPathModifier;
}

export interface HTTPRequestMirrorFilter {
  backendRef: BackendObjectReference;
  percent?: number;
  fraction?: { numerator: number; denominator?: number };
}

export interface HTTPRouteFilter {
  type: 'RequestHeaderModifier' | 'ResponseHeaderModifier' | 'RequestRedirect' | 'URLRewrite' | 'RequestMirror' | 'ExtensionRef' | string;
  requestHeaderModifier?: HTTPHeaderFilter;
  responseHeaderModifier?: HTTPHeaderFilter;
  requestRedirect?: HTTPRequestRedirectFilter;
  urlRewrite?: HTTPURLRewriteFilter;
  requestMirror?: HTTPRequestMirrorFilter;
  extensionRef?: { group: string; kind: string; name: string };
}

export interface HTTPBackendRef extends BackendObjectReference {
  weight?: number;
  filters?: HTTPRouteFilter[];
}

export interface HTTPRouteTimeouts {
  request?: string;
  backendRequest?: string;
}

export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  timeouts?: HTTPRouteTimeouts;
}

export interface HTTPRouteSpec {
  parentRefs?: ParentReference[];
  hostnames?: string[];
  rules?: HTTPRouteRule[];
}

export interface HTTPRoute extends KubeObject {
  kind: 'HTTPRoute';
  spec: HTTPRouteSpec;
}
