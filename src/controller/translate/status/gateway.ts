import type { ObjectStatus } from '../../../api/gateway/object.ts';
import type { GatewayModel } from '../gateway.ts';
import { allowsListenerSets, type ListenerSetModel } from '../listenerset.ts';
import { generationOf } from '../snapshot.ts';
import { condition } from './conditions.ts';
import { listenerStatus, ownerConditions } from './listener.ts';

/** Gateway status: Accepted/Programmed, one entry per own listener, `addresses` left out (the proxy's address is not known here). */
export function gatewayStatus(gateway: GatewayModel): ObjectStatus {
  const status: Record<string, unknown> = {
    conditions: ownerConditions(gateway.listeners, generationOf(gateway.object), 'Gateway'),
    listeners: gateway.listeners.map(listenerStatus),
  };
  if (allowsListenerSets(gateway.object)) status.attachedListenerSets = gateway.listenerSets.filter((s) => !s.notAllowed).length;
  return { apiVersion: gateway.object.apiVersion, kind: gateway.object.kind, metadata: { name: gateway.name, namespace: gateway.namespace }, status };
}

export function listenerSetStatus(set: ListenerSetModel): ObjectStatus {
  const generation = generationOf(set.object);
  const conditions = set.notAllowed
    ? [condition('Accepted', false, set.notAllowed.reason, set.notAllowed.message, generation), condition('Programmed', false, set.notAllowed.reason, set.notAllowed.message, generation)]
    : ownerConditions(set.listeners, generation, set.object.kind);
  return {
    apiVersion: set.object.apiVersion,
    kind: set.object.kind,
    metadata: { name: set.name, namespace: set.namespace },
    status: { conditions, listeners: set.listeners.map(listenerStatus) },
  };
}
