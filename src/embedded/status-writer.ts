import type { Condition, ObjectStatus } from '../api/gateway/object.ts';
import type { Logger } from '../common/logger.ts';

/** Conditions where True is the problem (Gateway API "negative polarity"). */
const NEGATIVE_POLARITY: ReadonlySet<string> = new Set(['Conflicted', 'OverlappingTLSConfig']);

interface Remembered {
  readonly status: string;
  readonly reason: string;
  readonly time: string;
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

  constructor(logger: Logger, now: () => Date = () => new Date()) {
    this.#logger = logger;
    this.#now = now;
  }

  update(statuses: readonly ObjectStatus[]): void {
    const time = this.#now().toISOString();
    const remembered = new Map<string, Remembered>();
    this.#current = statuses.map((object) => {
      const objectName = object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
      const status = structuredClone(object.status);
      forEachCondition(status, '', (condition, path) => {
        const key = `${object.apiVersion}/${object.kind}/${objectName}${path}/${condition.type}`;
        const before = this.#remembered.get(key);
        const unchanged = before !== undefined && before.status === condition.status && before.reason === condition.reason;
        condition.lastTransitionTime = unchanged ? before.time : time;
        remembered.set(key, { status: condition.status, reason: condition.reason, time: condition.lastTransitionTime });
        if (!unchanged) this.#logChange(object.kind, objectName, path, condition);
      });
      return { ...object, status };
    });
    this.#remembered = remembered;
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
