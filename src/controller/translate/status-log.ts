import type { ObjectStatus } from '../../api/gateway/object.ts';
import { byObject, statusId, type RecordChanges } from './object-delta.ts';
import { sameJson } from './same-json.ts';

/**
 * The statuses that differ from the previous result's (same object: unchanged; else compared
 * field by field, sameJson), so the thread sends only those. Only the previous result's list is
 * kept (no JSON string or map per status): when the new list has the same length and each
 * position is the same object or a status for the same object as before (an edit, statuses in
 * their sorted order), it is compared position by position; else by id.
 *
 * The first result (and the first after reset()) has nothing to be compared with: it says
 * undefined — the receiver takes the statuses whole — instead of an id and a set entry for each
 * of 11k statuses (20–30 ms of a cold first translation). What the next call needs of it, that
 * no two share an id, is read from its order (translate() sorts them, byObject) when it is sorted.
 */
export class StatusLog {
  /** The previous result's statuses; undefined before the first one, after reset() and after a result with a duplicate id (the next is then compared with nothing). */
  #previous: readonly ObjectStatus[] | undefined;

  reset(): void {
    this.#previous = undefined;
  }

  /** The changes since the previous call; undefined for the first call and when two statuses share an id (the receiver then takes them whole). */
  next(statuses: readonly ObjectStatus[]): RecordChanges<ObjectStatus> | undefined {
    const previous = this.#previous;
    if (previous === undefined && distinctInOrder(statuses)) {
      this.#previous = statuses;
      return undefined;
    }
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

/**
 * Whether `statuses` are in strictly ascending byObject order — then no two are for the same
 * object — and no field of their ids holds the separator statusId joins them with (so distinct
 * objects have distinct ids). False says only "not known": the caller then compares by id.
 */
function distinctInOrder(statuses: readonly ObjectStatus[]): boolean {
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i] as ObjectStatus;
    if (hasSeparator(status)) return false;
    if (i > 0 && byObject(statuses[i - 1] as ObjectStatus, status) >= 0) return false;
  }
  return true;
}

const hasSeparator = (status: ObjectStatus): boolean =>
  status.apiVersion.includes('\u0000') || status.kind.includes('\u0000') || (status.metadata.namespace ?? '').includes('\u0000') || status.metadata.name.includes('\u0000');

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
