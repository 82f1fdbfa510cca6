/**
 * How a ProxyModel reaches a models rule (an HTTPRoute rule whose only backendRef is the ProxyModel
 * backend `*`; docs/models.md "Attaching models"):
 *
 * - an HTTPRoute parentRef names the rule itself (proxy-model.ts `namesRule`);
 * - a Gateway or ListenerSet parentRef makes the model join every models rule of every HTTPRoute
 *   attached to that Gateway or ListenerSet. With `sectionName` (a listener name) it joins only
 *   the routes whose parentRef names that same listener: a rule's backend is shared by all the
 *   listeners its route attaches to, so a route attached to the whole Gateway cannot serve a model
 *   to one listener only.
 *
 * Precedence within a rule: the most specific `match.model` first, as always; at equal patterns
 * a model attached to the rule itself wins over one attached through a ListenerSet, which wins
 * over one attached through a Gateway (the nearer attachment is the more deliberate one); then
 * the older object. A model attached more than once is listed once, at its nearest attachment.
 */
import { GATEWAY_GROUP } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import { isDict, listOf, type Dict } from './read.ts';
import { namespaceOf } from './snapshot.ts';

/** A Gateway or ListenerSet a route (or model) attaches to, as its parentRef writes it. */
export interface ParentKey {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly sectionName?: string;
}

/** Attachment tiers, nearest first (lower wins at equal specificity). */
export const TIER_RULE = 0;
export const TIER_LISTENER_SET = 1;
export const TIER_GATEWAY = 2;

/** A parentRef to a Gateway or ListenerSet (ParentReference defaults: group gateway.networking.k8s.io, kind Gateway), or undefined. */
export function gatewayLikeParent(parentRef: Dict, referrerNamespace: string): ParentKey | undefined {
  const group = typeof parentRef.group === 'string' ? parentRef.group : GATEWAY_GROUP;
  const kind = typeof parentRef.kind === 'string' ? parentRef.kind : 'Gateway';
  if (kind !== 'Gateway' && kind !== 'ListenerSet' && kind !== 'XListenerSet') return undefined;
  if (typeof parentRef.name !== 'string') return undefined;
  const namespace = typeof parentRef.namespace === 'string' && parentRef.namespace ? parentRef.namespace : referrerNamespace;
  return { group, kind, namespace, name: parentRef.name, ...(typeof parentRef.sectionName === 'string' ? { sectionName: parentRef.sectionName } : {}) };
}

/** The Gateways and ListenerSets `route` attaches to. */
export function routeParents(route: KubeObject | undefined): ParentKey[] {
  if (!route || !isDict(route.spec)) return [];
  const namespace = namespaceOf(route);
  return listOf<Dict>(route.spec.parentRefs).flatMap((p) => gatewayLikeParent(p, namespace) ?? []);
}

/** Whether a model's parent `model` reaches a route attached to `route` (same object; a listener only through the same listener). */
export function parentReaches(model: ParentKey, route: ParentKey): boolean {
  if (model.group !== route.group || model.kind !== route.kind || model.namespace !== route.namespace || model.name !== route.name) return false;
  return model.sectionName === undefined || model.sectionName === route.sectionName;
}

/** The nearest tier through which `model`'s Gateway/ListenerSet parentRefs reach a route with `parents`, or undefined. */
export function parentTier(model: KubeObject, parents: readonly ParentKey[]): number | undefined {
  let best: number | undefined;
  const namespace = namespaceOf(model);
  for (const ref of listOf<Dict>(isDict(model.spec) ? model.spec.parentRefs : undefined)) {
    const key = gatewayLikeParent(ref, namespace);
    if (!key || !parents.some((p) => parentReaches(key, p))) continue;
    const tier = key.kind === 'Gateway' ? TIER_GATEWAY : TIER_LISTENER_SET;
    if (best === undefined || tier < best) best = tier;
  }
  return best;
}
