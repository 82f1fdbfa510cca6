import { GATEWAY_GROUP, type AllowedListeners, type ListenerSetSpec } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import { buildListeners, type ListenerModel } from './listener.ts';
import { groupOf, isDict } from './read.ts';
import { selectorMatches } from './selector.ts';
import { generationOf, namespaceOf, type Snapshot } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

export interface ListenerSetModel {
  readonly object: KubeObject;
  readonly namespace: string;
  readonly name: string;
  /** Set when the parent Gateway does not allow this ListenerSet; its listeners are then not built. */
  readonly notAllowed?: Problem;
  readonly listeners: readonly ListenerModel[];
}

/** `<group>/<kind>/<ns>/<name>`: how routes' parentRefs find a ListenerSet. */
export function listenerSetId(group: string, kind: string, namespace: string, name: string): string {
  return `${group}/${kind}/${namespace}/${name}`;
}

/** The `<ns>/<name>` of the Gateway a ListenerSet asks to join, or undefined when its parentRef is not a Gateway. */
export function listenerSetParent(ls: KubeObject): string | undefined {
  const spec = (isDict(ls.spec) ? ls.spec : {}) as Partial<ListenerSetSpec>;
  const ref = isDict(spec.parentRef) ? spec.parentRef : undefined;
  if (!ref || typeof ref.name !== 'string') return undefined;
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') return undefined;
  return `${typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : namespaceOf(ls)}/${ref.name}`;
}

/** Attach a ListenerSet to its (our) parent Gateway, honouring the Gateway's `spec.allowedListeners` (None by default). */
export function buildListenerSet(ls: KubeObject, gateway: KubeObject, snapshot: Snapshot): ListenerSetModel {
  const namespace = namespaceOf(ls);
  const gatewayRef = { namespace: namespaceOf(gateway), name: gateway.metadata.name };
  const base = { object: ls, namespace, name: ls.metadata.name };
  const gwSpec = isDict(gateway.spec) ? gateway.spec : {};
  const allowed = isDict(gwSpec.allowedListeners) ? (gwSpec.allowedListeners as AllowedListeners) : {};
  const from = isDict(allowed.namespaces) ? (allowed.namespaces.from ?? 'None') : 'None';
  const permitted =
    from === 'All' ||
    (from === 'Same' && namespace === gatewayRef.namespace) ||
    (from === 'Selector' && isDict(allowed.namespaces?.selector) && selectorMatches(allowed.namespaces.selector, snapshot.namespaceLabels(namespace)));
  if (!permitted) {
    return {
      ...base,
      notAllowed: { reason: 'NotAllowed', message: `Gateway ${gatewayRef.namespace}/${gatewayRef.name} does not allow ListenerSets from namespace ${namespace} (spec.allowedListeners.namespaces.from is ${String(from)})` },
      listeners: [],
    };
  }
  const owner = { apiVersion: ls.apiVersion, group: groupOf(ls.apiVersion), kind: ls.kind, namespace, name: ls.metadata.name, generation: generationOf(ls) };
  const spec = isDict(ls.spec) ? ls.spec : {};
  return { ...base, listeners: buildListeners(owner, gatewayRef, spec.listeners, snapshot) };
}

/** Whether the Gateway accepts ListenerSets at all (for its `attachedListenerSets` count). */
export function allowsListenerSets(gateway: KubeObject): boolean {
  const spec = isDict(gateway.spec) ? gateway.spec : {};
  const allowed = isDict(spec.allowedListeners) ? (spec.allowedListeners as AllowedListeners) : {};
  const from = isDict(allowed.namespaces) ? (allowed.namespaces.from ?? 'None') : 'None';
  return from !== 'None';
}
