/**
 * Object and status identity shared by the translator and the threads that feed it: the keys
 * objects are held by, the delta between two sets of objects, and what changed between two
 * translations. A leaf with no translator imports, so the serving thread can name these without
 * loading the translator (its schemas and CEL) into its own isolate.
 */
import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import type { Backend, Route } from '../../ir/types.ts';
import { isClusterScoped } from '../sources/known-kinds.ts';

/** Objects to set (added or changed, by identity) and keys (objectKeyOf) to drop. */
export interface ObjectDelta {
  readonly upserted: readonly KubeObject[];
  readonly removed: readonly string[];
}

/** What changed in the config's records since the previous result (all of them on the first). */
export interface RecordChanges<T> {
  /** New or changed entries. */
  readonly set: Readonly<Record<string, T>>;
  readonly removed: readonly string[];
}

export interface ConfigChanges {
  /** true on the first result: `set` holds every entry. */
  readonly full: boolean;
  readonly routes: RecordChanges<Route>;
  readonly backends: RecordChanges<Backend>;
  /** Statuses by statusId(); undefined when two statuses share an id (then the receiver takes `statuses` whole). */
  readonly statuses: RecordChanges<ObjectStatus> | undefined;
}

/** Which object a status is for. */
export function statusId(status: ObjectStatus): string {
  let id = statusIds.get(status);
  if (id === undefined) statusIds.set(status, (id = idOf(status)));
  return id;
}

/** Unchanged statuses are the same objects from one translation to the next: their id is built once. */
const statusIds = new WeakMap<ObjectStatus, string>();

/**
 * A status that arrived keyed by its statusId() (a structured clone from the translator thread,
 * a new object): its id is the key, so the next edit does not build ids for all of them again
 * (~14 ms for 11k on the controller's first edit).
 */
export function knownStatusId(status: ObjectStatus, id: string): void {
  statusIds.set(status, id);
}

function idOf(status: ObjectStatus): string {
  return `${status.apiVersion}\u0000${status.kind}\u0000${status.metadata.namespace ?? ''}\u0000${status.metadata.name}`;
}

/**
 * `kind/namespace/name`, as the store keys objects (src/controller/store/store.ts); undefined for
 * an object translate() would skip (no kind or name), which is then carried unkeyed.
 */
export function objectKeyOf(object: KubeObject): string | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  // Objects are replaced, never changed in place (the identity comparisons here rely on it): an
  // object's key is built once, not on every diff of 11k objects.
  if (objectKeys.has(object)) return objectKeys.get(object);
  const key = keyOf(object);
  objectKeys.set(object, key);
  return key;
}

const objectKeys = new WeakMap<KubeObject, string | undefined>();

function keyOf(object: KubeObject): string | undefined {
  if (typeof object.kind !== 'string') return undefined;
  const metadata = object.metadata as KubeObject['metadata'] | undefined;
  if (typeof metadata !== 'object' || metadata === null || typeof metadata.name !== 'string' || metadata.name === '') return undefined;
  const namespace = isClusterScoped(object.kind) ? '' : (typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : 'default');
  // Joined, not a template: a flat string (~50 bytes) instead of a tree of its parts (~130), kept per object.
  return [object.kind, '/', namespace, '/', metadata.name].join('');
}

/** The delta that turns `held` (by key) into `objects`; objects are compared by identity. */
export function diffObjects(held: ReadonlyMap<string, KubeObject>, objects: readonly KubeObject[]): { delta: ObjectDelta; next: Map<string, KubeObject> } | undefined {
  const next = new Map<string, KubeObject>();
  const upserted: KubeObject[] = [];
  for (const object of objects) {
    const key = objectKeyOf(object);
    // An unkeyable object, or two with one key (the store dedupes; a caller that did not): no delta.
    if (key === undefined || next.has(key)) return undefined;
    next.set(key, object);
    if (held.get(key) !== object) upserted.push(object);
  }
  const removed: string[] = [];
  for (const key of held.keys()) if (!next.has(key)) removed.push(key);
  return { delta: { upserted, removed }, next };
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The order statuses are kept and written in: kind, namespace, name, apiVersion. */
export function byObject(a: ObjectStatus, b: ObjectStatus): number {
  return compareStrings(a.kind, b.kind) || compareStrings(a.metadata.namespace ?? '', b.metadata.namespace ?? '') || compareStrings(a.metadata.name, b.metadata.name) || compareStrings(a.apiVersion, b.apiVersion);
}
