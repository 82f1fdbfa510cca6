import type { KubeObject } from '../../api/gateway/object.ts';
import { markConflicts } from './listener-conflicts.ts';
import { buildListeners, type ListenerModel } from './listener.ts';
import { buildListenerSet, listenerSetId, listenerSetParent, type ListenerSetModel } from './listenerset.ts';
import { groupOf, isDict } from './read.ts';
import { generationOf, namespacedName, namespaceOf, type Snapshot } from './snapshot.ts';

export interface GatewayModel {
  readonly object: KubeObject;
  readonly namespace: string;
  readonly name: string;
  readonly listeners: readonly ListenerModel[];
  readonly listenerSets: readonly ListenerSetModel[];
}

/** Our Gateways and ListenerSets with their listeners, conflicts already marked. */
export interface GatewayGraph {
  /** By `<ns>/<name>`, oldest first. */
  readonly gateways: ReadonlyMap<string, GatewayModel>;
  /** Gateways that exist but belong to another class: never touched. */
  readonly foreignGateways: ReadonlySet<string>;
  /** By listenerSetId(); only ListenerSets whose parent is one of our Gateways. */
  readonly listenerSets: ReadonlyMap<string, ListenerSetModel>;
  /** ListenerSets (by listenerSetId()) whose parent Gateway is not ours. */
  readonly foreignListenerSets: ReadonlySet<string>;
  /** Every listener in precedence order. */
  readonly listeners: readonly ListenerModel[];
}

export function buildGatewayGraph(snapshot: Snapshot, ourClasses: ReadonlySet<string>): GatewayGraph {
  const ours = snapshot.gateways.filter((gw) => isDict(gw.spec) && typeof gw.spec.gatewayClassName === 'string' && ourClasses.has(gw.spec.gatewayClassName));
  const ourIds = new Set(ours.map(namespacedName));
  const foreignGateways = new Set(snapshot.gateways.map(namespacedName).filter((id) => !ourIds.has(id)));

  const listenerSets = new Map<string, ListenerSetModel>();
  const foreignListenerSets = new Set<string>();
  const setsByGateway = new Map<string, ListenerSetModel[]>();
  const gatewaysById = new Map(ours.map((gw) => [namespacedName(gw), gw]));
  for (const ls of snapshot.listenerSets) {
    const id = listenerSetId(groupOf(ls.apiVersion), ls.kind, namespaceOf(ls), ls.metadata.name);
    const parentId = listenerSetParent(ls);
    const parent = parentId === undefined ? undefined : gatewaysById.get(parentId);
    if (!parent || parentId === undefined) {
      foreignListenerSets.add(id);
      continue;
    }
    const model = buildListenerSet(ls, parent, snapshot);
    listenerSets.set(id, model);
    setsByGateway.set(parentId, [...(setsByGateway.get(parentId) ?? []), model]);
  }

  const gateways = new Map<string, GatewayModel>();
  const groups: ListenerModel[][] = [];
  for (const gw of ours) {
    const id = namespacedName(gw);
    const namespace = namespaceOf(gw);
    const owner = { apiVersion: gw.apiVersion, group: groupOf(gw.apiVersion), kind: 'Gateway', namespace, name: gw.metadata.name, generation: generationOf(gw) };
    const spec = isDict(gw.spec) ? gw.spec : {};
    const own = buildListeners(owner, { namespace, name: gw.metadata.name }, spec.listeners, snapshot);
    const sets = setsByGateway.get(id) ?? [];
    groups.push(own, ...sets.map((s) => [...s.listeners]));
    gateways.set(id, { object: gw, namespace, name: gw.metadata.name, listeners: own, listenerSets: sets });
  }
  markConflicts(groups);
  return { gateways, foreignGateways, listenerSets, foreignListenerSets, listeners: groups.flat() };
}
