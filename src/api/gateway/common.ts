/**
 * Shared Gateway API v1 building blocks. Plain interfaces describing what the API server (or the
 * file source) hands us; every field is optional where a malformed object could omit it, because
 * the translator reads defensively and turns mistakes into status conditions.
 */

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_EXPERIMENTAL_GROUP = 'gateway.networking.x-k8s.io';
export const CORE_GROUP = '';
export const SWITCHBOARD_GROUP = 'switchboard.dev';

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface RouteGroupKind {
  group?: string;
  kind: string;
}

/** A reference from a route to its parent (Gateway or ListenerSet). */
export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

/** A reference to a backend object (Service, ProxyBackend …). */
export interface BackendObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
}

export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface RouteNamespaces {
  from?: 'All' | 'Same' | 'Selector';
  selector?: LabelSelector;
}

export interface AllowedRoutes {
  namespaces?: RouteNamespaces;
  kinds?: RouteGroupKind[];
}
