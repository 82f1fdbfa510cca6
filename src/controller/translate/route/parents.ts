import { GATEWAY_EXPERIMENTAL_GROUP, GATEWAY_GROUP, type ParentReference } from '../../../api/gateway/index.ts';
import type { GatewayGraph } from '../gateway.ts';
import { effectiveHostnames } from '../hostnames.ts';
import type { ListenerModel } from '../listener.ts';
import { listenerSetId } from '../listenerset.ts';
import type { Problem } from '../status/conditions.ts';

export interface Attachment {
  readonly listener: ListenerModel;
  /** Effective hostnames on this listener ([] = every host the listener accepts). */
  readonly hostnames: readonly string[];
}

export interface ParentOutcome {
  /** The parentRef as written, with the API server's group/kind defaults. */
  readonly parentRef: Readonly<Record<string, unknown>>;
  /** Why the route is not accepted by this parent (Accepted=False). */
  readonly problem?: Problem;
  readonly attachments: readonly Attachment[];
}

const LISTENER_SET_KINDS: Record<string, string> = { [GATEWAY_GROUP]: 'ListenerSet', [GATEWAY_EXPERIMENTAL_GROUP]: 'XListenerSet' };

/**
 * Attach a route to one parentRef. Returns undefined for parents that are not ours (another
 * class's Gateway, a kind we do not implement): their status belongs to someone else.
 */
export function attachToParent(ref: ParentReference, routeNamespace: string, routeHostnames: readonly string[], graph: GatewayGraph): ParentOutcome | undefined {
  const group = ref.group ?? GATEWAY_GROUP;
  const kind = ref.kind ?? 'Gateway';
  const namespace = typeof ref.namespace === 'string' && ref.namespace ? ref.namespace : routeNamespace;
  const id = `${namespace}/${String(ref.name)}`;
  const parentRef = { ...ref, group, kind };
  const noParent = (message: string): ParentOutcome => ({ parentRef, problem: { reason: 'NoMatchingParent', message }, attachments: [] });

  let listeners: readonly ListenerModel[];
  if (group === GATEWAY_GROUP && kind === 'Gateway') {
    if (graph.foreignGateways.has(id)) return undefined;
    const gateway = graph.gateways.get(id);
    if (!gateway) return noParent(`Gateway ${id} not found`);
    // A Gateway parent reaches the Gateway's own listeners only; ListenerSet listeners are reached through the ListenerSet.
    listeners = gateway.listeners;
  } else if (LISTENER_SET_KINDS[group] === kind) {
    const setId = listenerSetId(group, kind, namespace, String(ref.name));
    if (graph.foreignListenerSets.has(setId)) return undefined;
    const set = graph.listenerSets.get(setId);
    if (!set) return noParent(`${kind} ${id} not found`);
    if (set.notAllowed) return noParent(`${kind} ${id} is not attached to its Gateway: ${set.notAllowed.message}`);
    listeners = set.listeners;
  } else {
    return undefined;
  }

  const selected = listeners.filter((l) => (ref.sectionName === undefined || l.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port));
  if (selected.length === 0) {
    const wanted = [ref.sectionName !== undefined ? `named ${ref.sectionName}` : '', ref.port !== undefined ? `on port ${ref.port}` : ''].filter(Boolean).join(' ');
    return noParent(`${kind} ${id} has no listener${wanted ? ` ${wanted}` : ''}`);
  }
  const allowing = selected.filter((l) => l.supportedKinds.some((k) => k.kind === 'HTTPRoute') && l.allowsRoutesFrom(routeNamespace));
  if (allowing.length === 0) {
    return { parentRef, problem: { reason: 'NotAllowedByListeners', message: `no listener of ${kind} ${id} (${selected.map((l) => l.name).join(', ')}) allows HTTPRoutes from namespace ${routeNamespace}` }, attachments: [] };
  }
  const attachments: Attachment[] = [];
  for (const listener of allowing) {
    const hostnames = effectiveHostnames(listener.hostname, routeHostnames);
    if (hostnames !== null) attachments.push({ listener, hostnames });
  }
  if (attachments.length === 0) {
    const names = allowing.map((l) => `${l.name} (${l.hostname ?? 'any'})`).join(', ');
    return { parentRef, problem: { reason: 'NoMatchingListenerHostname', message: `spec.hostnames ${routeHostnames.join(', ')} match no hostname of listeners ${names}` }, attachments: [] };
  }
  return { parentRef, attachments };
}
