import type { Condition } from '../../../api/gateway/object.ts';
import { isProgrammed, type ListenerModel } from '../listener.ts';
import { condition, conditionFrom } from './conditions.ts';

/** A listener's entry in Gateway/ListenerSet `status.listeners`. */
export function listenerStatus(listener: ListenerModel): Record<string, unknown> {
  const generation = listener.owner.generation;
  const conditions: Condition[] = [
    conditionFrom('Accepted', listener.accepted, 'Accepted', 'Listener is accepted', generation),
    conditionFrom('ResolvedRefs', listener.refs, 'ResolvedRefs', 'All references are resolved', generation),
    listener.conflict
      ? condition('Conflicted', true, listener.conflict.reason, listener.conflict.message, generation)
      : condition('Conflicted', false, 'NoConflicts', 'No conflicts', generation),
    isProgrammed(listener)
      ? condition('Programmed', true, 'Programmed', 'Listener is programmed', generation)
      : condition('Programmed', false, 'Invalid', notProgrammedMessage(listener), generation),
  ];
  return { name: listener.name, supportedKinds: listener.supportedKinds, attachedRoutes: listener.attachedRoutes, conditions };
}

function notProgrammedMessage(listener: ListenerModel): string {
  if (listener.accepted.length > 0) return 'Listener is not accepted';
  if (listener.conflict) return 'Listener conflicts with another listener on its port';
  return 'Listener has no valid certificate';
}

/** Accepted and Programmed for the object that owns a set of listeners. */
export function ownerConditions(listeners: readonly ListenerModel[], generation: number | undefined, what: string): Condition[] {
  const invalid = listeners.filter((l) => !isProgrammed(l));
  const programmed = listeners.length - invalid.length;
  const invalidNames = invalid.map((l) => l.name).join(', ');
  const accepted =
    invalid.length === 0
      ? condition('Accepted', true, 'Accepted', `${what} is accepted`, generation)
      : condition('Accepted', programmed > 0, 'ListenersNotValid', `Listeners not valid: ${invalidNames}`, generation);
  const programmedCondition =
    programmed > 0
      ? condition('Programmed', true, 'Programmed', `${what} is programmed with ${programmed} listener${programmed === 1 ? '' : 's'}`, generation)
      : condition('Programmed', false, 'Invalid', `${what} has no valid listener`, generation);
  return [accepted, programmedCondition];
}
