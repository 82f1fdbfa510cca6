import type { ObjectStatus } from '../../api/gateway/object.ts';
import { statusId, type RecordChanges } from './object-delta.ts';
import { sameJson } from './same-json.ts';

/**
 * The statuses that differ from the previous result's (same object: unchanged; else compared
 * field by field, sameJson), so the thread sends only those. Only the previous result's list is
 * kept (no JSON string or map per status): when the new list has the same length and each
 * position is the same object or a status for the same object as before (an edit, statuses in
 * their sorted order), it is compared position by position; else by id. The first result's
 * changes set every status by its id: the controller's receiver keeps those ids
 * (translator-thread.ts, knownStatusId). A translator whose caller never reads status changes
 * runs no log at all (IncrementalOptions.statusChanges).
 */
export class StatusLog {
  /** The previous result's statuses; undefined before the first one, after reset() and after a result with a duplicate id (the next is then compared with nothing). */
  #previous: readonly ObjectStatus[] | undefined;

  reset(): void {
    this.#previous = undefined;
  }

  /** The changes since the previous call; undefined when two statuses share an id (the receiver then takes them whole). */
  next(statuses: readonly ObjectStatus[]): RecordChanges<ObjectStatus> | undefined {
    const previous = this.#previous;
    const changes = previous !== undefined && previous.length === statuses.length ? inPlace(previous, statuses) : undefined;
    if (changes !== undefined) {
      this.#previous = statuses;
      return changes;
    }
    const before = new Map<string, ObjectStatus>();
    for (const status of previous ?? []) before.set(statusId(status), status);
    const set: Record<string, ObjectStatus> = {};
    const seen = new Set<string>();
    for (const status of statuses) {
      const id = statusId(status);
      if (seen.has(id)) {
        this.#previous = undefined;
        return undefined;
      }
      seen.add(id);
      const was = before.get(id);
      if (was === undefined || (was !== status && !sameJson(was, status))) set[id] = status;
    }
    const removed: string[] = [];
    for (const id of before.keys()) if (!seen.has(id)) removed.push(id);
    this.#previous = statuses;
    return { set, removed };
  }
}

/** The changes when every position holds the status of the same object as before (ids were unique then, so they are now); undefined otherwise. */
function inPlace(previous: readonly ObjectStatus[], statuses: readonly ObjectStatus[]): RecordChanges<ObjectStatus> | undefined {
  const set: Record<string, ObjectStatus> = {};
  for (let i = 0; i < statuses.length; i++) {
    const was = previous[i] as ObjectStatus;
    const now = statuses[i] as ObjectStatus;
    if (was === now) continue;
    const id = statusId(now);
    if (id !== statusId(was)) return undefined;
    if (!sameJson(was, now)) set[id] = now;
  }
  return { set, removed: [] };
}
