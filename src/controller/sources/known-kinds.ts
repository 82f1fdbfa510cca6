/**
 * The kinds the translator reads, by API group (`''` is the core group). Anything else in a
 * source is ignored: a folder of manifests often holds Deployments and the like, and they are
 * none of the gateway's business.
 */
const KNOWN_KINDS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['', new Set(['Service', 'Secret', 'ConfigMap', 'Namespace'])],
  ['discovery.k8s.io', new Set(['EndpointSlice'])],
  ['gateway.networking.k8s.io', new Set(['GatewayClass', 'Gateway', 'HTTPRoute', 'ReferenceGrant', 'ListenerSet'])],
  ['gateway.networking.x-k8s.io', new Set(['XListenerSet'])],
  ['switchboard.dev', new Set(['ProxyBackend', 'ProxyPolicy', 'ProxyParameters', 'ProxyModel', 'ProxyModelList'])],
]);

/** Kinds that have no namespace: an object of these kinds is keyed by name alone. */
const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set(['GatewayClass', 'Namespace']);

/** `gateway.networking.k8s.io/v1` → `gateway.networking.k8s.io`; `v1` → `''`. */
export function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export function isKnownKind(apiVersion: string, kind: string): boolean {
  return KNOWN_KINDS.get(apiGroupOf(apiVersion))?.has(kind) ?? false;
}

export function isClusterScoped(kind: string): boolean {
  return CLUSTER_SCOPED_KINDS.has(kind);
}
