/**
 * The resource types the fake API server serves, and how a request path names one of them. Paths
 * follow the real REST layout: `/api/v1/...` for the core group, `/apis/<group>/<version>/...`
 * for the others, `namespaces/<ns>/` in front of a namespaced resource, `/status` after a name.
 */

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Has a status subresource: the main resource ignores status, `/status` ignores everything else. */
  readonly status: boolean;
  /**
   * A CRD (or aggregated) type: list items carry apiVersion/kind. Built-in types do not, as the
   * real server's list encoding drops them; a client must fill them in from the list.
   */
  readonly custom: boolean;
}

function type(group: string, version: string, kind: string, plural: string, namespaced: boolean, status: boolean, custom: boolean): ResourceType {
  return { group, version, kind, plural, namespaced, status, custom };
}

/** Every kind the Switchboard controller reads or writes, plus Lease and TokenReview. */
export const DEFAULT_RESOURCE_TYPES: readonly ResourceType[] = [
  type('', 'v1', 'Namespace', 'namespaces', false, true, false),
  type('', 'v1', 'Service', 'services', true, true, false),
  type('', 'v1', 'Secret', 'secrets', true, false, false),
  type('', 'v1', 'ConfigMap', 'configmaps', true, false, false),
  type('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true, false, false),
  type('coordination.k8s.io', 'v1', 'Lease', 'leases', true, false, false),
  // What provisioning writes (src/controller/kube/provision/).
  type('', 'v1', 'ServiceAccount', 'serviceaccounts', true, false, false),
  type('apps', 'v1', 'Deployment', 'deployments', true, true, false),
  type('apps', 'v1', 'DaemonSet', 'daemonsets', true, true, false),
  type('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, true, false),
  type('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, true, false),
  type('authentication.k8s.io', 'v1', 'TokenReview', 'tokenreviews', false, false, false),
  type('gateway.networking.k8s.io', 'v1', 'GatewayClass', 'gatewayclasses', false, true, true),
  type('gateway.networking.k8s.io', 'v1', 'Gateway', 'gateways', true, true, true),
  type('gateway.networking.k8s.io', 'v1', 'HTTPRoute', 'httproutes', true, true, true),
  type('gateway.networking.k8s.io', 'v1', 'ListenerSet', 'listenersets', true, true, true),
  type('gateway.networking.k8s.io', 'v1beta1', 'ReferenceGrant', 'referencegrants', true, false, true),
  type('gateway.networking.x-k8s.io', 'v1alpha1', 'XListenerSet', 'xlistenersets', true, true, true),
  type('switchboard.dev', 'v1alpha1', 'ProxyBackend', 'proxybackends', true, true, true),
  type('switchboard.dev', 'v1alpha1', 'ProxyPolicy', 'proxypolicies', true, true, true),
  type('switchboard.dev', 'v1alpha1', 'ProxyParameters', 'proxyparameters', true, true, true),
  type('switchboard.dev', 'v1alpha1', 'ProxyModel', 'proxymodels', true, true, true),
];

export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** What a resource path names. `namespace` is set for a namespaced path, `name` for an object path. */
export interface ResourcePath {
  readonly type: ResourceType;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
}

export type ParsedPath =
  | { readonly kind: 'resource'; readonly path: ResourcePath }
  | { readonly kind: 'discovery-root'; readonly core: boolean }
  | { readonly kind: 'discovery-group-version'; readonly group: string; readonly version: string }
  | { readonly kind: 'unknown' };

/** Splits a request path into what it names; `unknown` for a path no served type matches. */
export function parsePath(pathname: string, types: readonly ResourceType[]): ParsedPath {
  const segments = pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
  if (segments.length === 1 && (segments[0] === 'api' || segments[0] === 'apis')) return { kind: 'discovery-root', core: segments[0] === 'api' };
  let group: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 2) {
    group = '';
    rest = segments.slice(1);
  } else if (segments[0] === 'apis' && segments.length >= 3) {
    group = segments[1]!;
    rest = segments.slice(2);
  } else {
    return { kind: 'unknown' };
  }
  const version = rest[0]!;
  const after = rest.slice(1);
  if (after.length === 0) return { kind: 'discovery-group-version', group, version };
  const find = (plural: string): ResourceType | undefined => types.find((t) => t.group === group && t.version === version && t.plural === plural);
  // `namespaces/<ns>/<plural>/...` is a namespaced path; `namespaces/<name>[/status]` is a Namespace.
  if (after[0] === 'namespaces' && after.length >= 3 && after[2] !== 'status' && after[2] !== 'finalize') {
    const t = find(after[2]!);
    if (!t || !t.namespaced || after.length > 5) return { kind: 'unknown' };
    return { kind: 'resource', path: { type: t, namespace: after[1]!, ...(after[3] ? { name: after[3] } : {}), ...(after[4] ? { subresource: after[4] } : {}) } };
  }
  const t = find(after[0]!);
  if (!t || after.length > 3) return { kind: 'unknown' };
  return { kind: 'resource', path: { type: t, ...(after[1] ? { name: after[1] } : {}), ...(after[2] ? { subresource: after[2] } : {}) } };
}
