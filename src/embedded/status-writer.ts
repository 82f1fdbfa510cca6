import type { Condition, ObjectStatus } from '../api/gateway/object.ts';
import type { Logger } from '../common/logger.ts';

/** Conditions where True is the problem (Gateway API "negative polarity"). */
const NEGATIVE_POLARITY: ReadonlySet<string> = new Set(['Conflicted', 'OverlappingTLSConfig']);

/**
 * What a condition was when written: the stamped condition itself (the writer's copy, or the
 * status object's own when owned), not an object of its own (22k at 10k routes).
 */
interface Remembered {
  readonly status: string;
  readonly reason: string;
  readonly lastTransitionTime?: string;
}

interface Written {
  readonly output: ObjectStatus;
  readonly remembered: readonly (readonly [string, Remembered])[];
  /** The update that last saw this status object (see update()). */
  seen: number;
}

/**
 * The status writer of embedded mode: there is no API server to write to, so it keeps the latest
 * statuses for the admin endpoint and logs what changed. It owns `lastTransitionTime`, which the
 * translator leaves out to stay pure: a condition keeps its old time while its status and reason
 * stay the same, and gets the current time when either changes.
 */
export class StatusWriter {
  readonly #logger: Logger;
  readonly #now: () => Date;
  #current: readonly ObjectStatus[] = [];
  /** The previous update's statuses as given, and what was written for each, by position (update()'s fast path). */
  #given: readonly ObjectStatus[] = [];
  #writtenAt: readonly Written[] = [];
  /** Condition → its status, reason and time, for the conditions of the current statuses only. */
  readonly #remembered = new Map<string, Remembered>();
  /** What was written for each status object of the current statuses. */
  readonly #written = new Map<ObjectStatus, Written>();
  #updates = 0;
  /** update()'s statuses are this writer's alone: lastTransitionTime is written into them, not into a copy. */
  readonly #owned: boolean;

  /**
   * `owned`: the caller hands over statuses nobody else reads or compares (the controller's come
   * from the translator thread by structured clone), so each is stamped in place instead of kept
   * a second time as a stamped copy (11k statuses, ~23 MiB of the controller's heap).
   */
  constructor(logger: Logger, now: () => Date = () => new Date(), owned = false) {
    this.#logger = logger;
    this.#now = now;
    this.#owned = owned;
  }

  /**
   * Cost grows with the statuses that are new objects, not with all of them: the translator thread
   * hands back unchanged statuses as the same objects (one route edit at 10k routes: one or two new
   * statuses of 11k), in their sorted order, so most sit at the same place as last time and need
   * no look-up; the maps are changed in place rather than rebuilt.
   */
  update(statuses: readonly ObjectStatus[]): void {
    const update = ++this.#updates;
    const time = this.#now().toISOString();
    const given = this.#given;
    const writtenAt = this.#writtenAt;
    // Entries of the new status objects: applied after all are stamped, so each reads the previous update's entries.
    const fresh: (readonly [string, Remembered])[] = [];
    // Status objects of the previous update not kept at their place: each may be gone (checked below).
    const displaced: ObjectStatus[] = [];
    const current = new Array<ObjectStatus>(statuses.length);
    const nextWrittenAt = new Array<Written>(statuses.length);
    // Indexed: this runs over 11k statuses per edit, the first times unoptimised (no closure, no iterator).
    for (let i = 0; i < statuses.length; i++) {
      const object = statuses[i] as ObjectStatus;
      // The same status object at the same place as last time (an edit: one or two of 11k are new):
      // nothing to stamp or log, and no look-up.
      // In bounds first: a read past the end (the first update, a longer list) is a slow path for V8.
      const atPlace = i < given.length && given[i] === object ? writtenAt[i] : undefined;
      if (atPlace !== undefined) {
        atPlace.seen = update;
        current[i] = atPlace.output;
        nextWrittenAt[i] = atPlace;
        continue;
      }
      if (i < given.length) displaced.push(given[i] as ObjectStatus);
      // The same status object elsewhere: still nothing to stamp or log.
      const kept = this.#written.get(object);
      if (kept) {
        kept.seen = update;
        current[i] = kept.output;
        nextWrittenAt[i] = kept;
        continue;
      }
      const written = this.#write(object, time, update, fresh);
      current[i] = written.output;
      nextWrittenAt[i] = written;
    }
    for (let i = statuses.length; i < given.length; i++) displaced.push(given[i] as ObjectStatus);
    this.#current = current;
    this.#given = statuses;
    this.#writtenAt = nextWrittenAt;
    // Status objects gone since the previous update take their conditions with them, unless a
    // new status object wrote the same condition (the same object, changed). Every object written
    // before was in the previous update's list, so only the displaced ones can be gone: every
    // other one was kept at its place above (and marked seen).
    if (displaced.length === 0 && fresh.length === 0) return;
    const freshKeys = new Set(fresh.map(([key]) => key));
    for (const object of displaced) {
      const written = this.#written.get(object);
      if (written === undefined || written.seen === update) continue;
      this.#written.delete(object);
      for (const [key] of written.remembered) if (!freshKeys.has(key)) this.#remembered.delete(key);
    }
    for (const [key, entry] of fresh) this.#remembered.set(key, entry);
  }

  /** Stamps a status object not written before, logs its changed conditions, and records it. */
  #write(object: ObjectStatus, time: string, update: number, fresh: (readonly [string, Remembered])[]): Written {
    const objectName = object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
    const own: [string, Remembered][] = [];
    const stampOne = (condition: Condition, path: string): void => {
      // Joined, not a template: V8 keeps a template's result as a tree of its parts (~330 bytes a
      // key here, ~170 joined), and a key lives as long as its condition (22k at 10k routes).
      const key = [object.apiVersion, '/', object.kind, '/', objectName, path, '/', condition.type].join('');
      const before = this.#remembered.get(key);
      const unchanged = before !== undefined && before.status === condition.status && before.reason === condition.reason;
      condition.lastTransitionTime = unchanged ? before.lastTransitionTime : time;
      own.push([key, condition]);
      if (!unchanged) this.#logChange(object.kind, objectName, path, condition);
    };
    let output: ObjectStatus;
    if (this.#owned) {
      forEachCondition(object.status, '', stampOne);
      output = object;
    } else {
      // A copy of only the conditions and the objects and arrays that lead to them, everything else
      // shared with the input: at start-up 11k statuses are written at once, and a structuredClone
      // of each (~150 ms, all of it live in the young generation) held the first edit back.
      output = { ...object, status: stampedCopy(object.status, '', stampOne) as ObjectStatus['status'] };
    }
    // A copy of its length: `own` grew by push (room for 17), and is kept with the status.
    const written = { output, remembered: own.slice(), seen: update };
    this.#written.set(object, written);
    fresh.push(...own);
    return written;
  }

  current(): readonly ObjectStatus[] {
    return this.#current;
  }

  #logChange(kind: string, name: string, path: string, condition: Condition): void {
    const healthy = NEGATIVE_POLARITY.has(condition.type) ? condition.status === 'False' : condition.status === 'True';
    // Checked before the fields are built: at start-up every condition of 11k statuses is new.
    if (!this.#logger.isLevelEnabled(healthy ? 'info' : 'warn')) return;
    const fields = { kind, name, ...(path ? { at: path.slice(1) } : {}), condition: condition.type, status: condition.status, reason: condition.reason, message: condition.message };
    if (healthy) this.#logger.info(fields, 'status changed');
    else this.#logger.warn(fields, 'status changed');
  }
}

/**
 * Visits every `conditions` array in a status (top level, `parents[]`, `ancestors[]`,
 * `listeners[]` …). Array elements are named by what identifies them (a parentRef, an
 * ancestorRef, a name) rather than their index, so reordering does not reset transition times.
 */
export function forEachCondition(value: unknown, path: string, visit: (condition: Condition, path: string) => void): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => forEachCondition(item, `${path}[${identify(item) ?? index}]`, visit));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [field, child] of Object.entries(value)) {
    if (field === 'conditions' && Array.isArray(child)) {
      for (const condition of child) if (isCondition(condition)) visit(condition, path);
    } else {
      forEachCondition(child, `${path}.${field}`, visit);
    }
  }
}

/**
 * `value` with each condition (as forEachCondition visits them, in the same order and with the
 * same paths) replaced by a copy given to `visit`, and each array or object holding one copied;
 * every other part is `value`'s own (shared, never changed).
 */
function stampedCopy(value: unknown, path: string, visit: (condition: Condition, path: string) => void): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const copy = stampedCopy(item, `${path}[${identify(item) ?? i}]`, visit);
      if (copy !== item) (out ??= value.slice())[i] = copy;
    }
    return out ?? value;
  }
  if (value === null || typeof value !== 'object') return value;
  let out: Record<string, unknown> | undefined;
  for (const [field, child] of Object.entries(value)) {
    let copy: unknown;
    if (field === 'conditions' && Array.isArray(child)) {
      copy = child.map((condition: unknown) => {
        if (!isCondition(condition)) return condition;
        const stamped = { ...condition };
        visit(stamped, path);
        return stamped;
      });
    } else {
      copy = stampedCopy(child, `${path}.${field}`, visit);
    }
    if (copy !== child) (out ??= { ...value })[field] = copy;
  }
  return out ?? value;
}

function identify(item: unknown): string | undefined {
  if (item === null || typeof item !== 'object') return undefined;
  const record = item as Record<string, unknown>;
  const ref = record.parentRef ?? record.ancestorRef;
  if (ref !== undefined) return JSON.stringify(ref);
  return typeof record.name === 'string' ? record.name : undefined;
}

function isCondition(value: unknown): value is Condition {
  return value !== null && typeof value === 'object' && typeof (value as Condition).type === 'string' && typeof (value as Condition).status === 'string';
}
