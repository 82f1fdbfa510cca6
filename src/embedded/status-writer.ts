import type { Condition, ObjectStatus } from '../api/gateway/object.ts';
import type { Logger } from '../common/logger.ts';

/** Conditions where True is the problem (Gateway API "negative polarity"). */
const NEGATIVE_POLARITY: ReadonlySet<string> = new Set(['Conflicted', 'OverlappingTLSConfig']);

interface Remembered {
  readonly status: string;
  readonly reason: string;
  readonly time: string;
}

interface Written {
  readonly output: ObjectStatus;
  readonly remembered: readonly (readonly [string, Remembered])[];
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
  #remembered = new Map<string, Remembered>();
  /** What the previous update wrote for each status object it was given. */
  #written = new Map<ObjectStatus, Written>();

  constructor(logger: Logger, now: () => Date = () => new Date()) {
    this.#logger = logger;
    this.#now = now;
  }

  update(statuses: readonly ObjectStatus[]): void {
    const time = this.#now().toISOString();
    const remembered = new Map<string, Remembered>();
    const written = new Map<ObjectStatus, Written>();
    this.#current = statuses.map((object) => {
      // The same status object as last time (the translator thread keeps unchanged ones): nothing to stamp or log.
      const kept = this.#written.get(object);
      if (kept) {
        for (const [key, entry] of kept.remembered) remembered.set(key, entry);
        written.set(object, kept);
        return kept.output;
      }
      const objectName = object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
      const status = structuredClone(object.status);
      const own: [string, Remembered][] = [];
      forEachCondition(status, '', (condition, path) => {
        const key = `${object.apiVersion}/${object.kind}/${objectName}${path}/${condition.type}`;
        const before = this.#remembered.get(key);
        const unchanged = before !== undefined && before.status === condition.status && before.reason === condition.reason;
        condition.lastTransitionTime = unchanged ? before.time : time;
        const entry = { status: condition.status, reason: condition.reason, time: condition.lastTransitionTime };
        remembered.set(key, entry);
        own.push([key, entry]);
        if (!unchanged) this.#logChange(object.kind, objectName, path, condition);
      });
      const output = { ...object, status };
      written.set(object, { output, remembered: own });
      return output;
    });
    this.#remembered = remembered;
    this.#written = written;
  }

  current(): readonly ObjectStatus[] {
    return this.#current;
  }

  #logChange(kind: string, name: string, path: string, condition: Condition): void {
    const fields = { kind, name, ...(path ? { at: path.slice(1) } : {}), condition: condition.type, status: condition.status, reason: condition.reason, message: condition.message };
    const healthy = NEGATIVE_POLARITY.has(condition.type) ? condition.status === 'False' : condition.status === 'True';
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
