/**
 * The kinds the controller watches in a cluster: every kind the translator reads
 * (src/controller/sources/known-kinds.ts), with the REST facts needed to list, watch and write
 * their status. Known statically, so no discovery round-trip is needed at start.
 */
import { CRD_KINDS, API_VERSION as SWITCHBOARD_API_VERSION } from '../../api/v1alpha1/kinds.ts';

export interface WatchedKind {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /**
   * An optional kind may be absent from a cluster (its CRD not installed: the experimental
   * XListenerSet, ListenerSet before Gateway API v1.5, ProxyModel when proxyModels.enabled is off):
   * a 404 on its list counts as "none", and the controller keeps checking for it.
   */
  readonly optional: boolean;
  /** The translator writes status for it (through the status subresource). */
  readonly hasStatus: boolean;
}

const GATEWAY = 'gateway.networking.k8s.io/v1';

function kind(apiVersion: string, name: string, plural: string, flags: { namespaced?: boolean; optional?: boolean; hasStatus?: boolean } = {}): WatchedKind {
  return { apiVersion, kind: name, plural, namespaced: flags.namespaced ?? true, optional: flags.optional ?? false, hasStatus: flags.hasStatus ?? false };
}

export const WATCHED_KINDS: readonly WatchedKind[] = [
  kind('v1', 'Namespace', 'namespaces', { namespaced: false }),
  kind('v1', 'Service', 'services'),
  kind('v1', 'Secret', 'secrets'),
  kind('v1', 'ConfigMap', 'configmaps'),
  kind('discovery.k8s.io/v1', 'EndpointSlice', 'endpointslices'),
  kind(GATEWAY, 'GatewayClass', 'gatewayclasses', { namespaced: false, hasStatus: true }),
  kind(GATEWAY, 'Gateway', 'gateways', { hasStatus: true }),
  kind(GATEWAY, 'HTTPRoute', 'httproutes', { hasStatus: true }),
  kind(GATEWAY, 'ListenerSet', 'listenersets', { optional: true, hasStatus: true }),
  kind('gateway.networking.k8s.io/v1beta1', 'ReferenceGrant', 'referencegrants'),
  kind('gateway.networking.x-k8s.io/v1alpha1', 'XListenerSet', 'xlistenersets', { optional: true, hasStatus: true }),
  ...CRD_KINDS.map((k) => kind(SWITCHBOARD_API_VERSION, k.kind, k.plural, { optional: k.kind === 'ProxyModel', hasStatus: true })),
];

/** `/api/v1/services`, `/apis/gateway.networking.k8s.io/v1/gateways`: the cluster-wide collection. */
export function collectionPath(k: WatchedKind): string {
  return `${k.apiVersion.includes('/') ? '/apis' : '/api'}/${k.apiVersion}/${k.plural}`;
}

/** The path of one object, or of its status subresource. */
export function objectPath(k: WatchedKind, name: string, namespace: string | undefined, subresource?: 'status'): string {
  const root = `${k.apiVersion.includes('/') ? '/apis' : '/api'}/${k.apiVersion}`;
  const scope = k.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
  return `${root}${scope}/${k.plural}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

/** WATCHED_KINDS by group, then kind name: the status writer looks one up per status (11k per flush). */
const byGroupAndKind = new Map<string, Map<string, WatchedKind>>();
for (const k of WATCHED_KINDS) {
  const group = groupOf(k.apiVersion);
  const kinds = byGroupAndKind.get(group) ?? new Map<string, WatchedKind>();
  // The first of a group and kind wins, as the linear search it replaces did.
  if (!kinds.has(k.kind)) kinds.set(k.kind, k);
  byGroupAndKind.set(group, kinds);
}

export function findWatchedKind(apiVersionGroup: string, name: string): WatchedKind | undefined {
  return byGroupAndKind.get(apiVersionGroup)?.get(name);
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
