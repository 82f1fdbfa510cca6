/**
 * A small but honest model of server-side apply's field ownership (managedFields).
 *
 * A field is a leaf path in the object: objects are walked into, lists and scalars are leaves
 * (the real server merges lists by key when the schema says `listType=map`; the fake treats every
 * list as atomic, which is what `listType=atomic` does). Each manager — a (name, operation,
 * subresource) triple — owns a set of leaves:
 *
 * - apply by M: every leaf of the applied config becomes M's; a leaf another manager owns with a
 *   different value is a conflict (409) unless `force`, which moves it to M; a leaf M owned before
 *   and no longer applies is removed from the object when no other manager owns it.
 * - any other write (create, update, merge patch) by U: leaves that appear or change become U's
 *   (taken from whoever owned them), leaves that disappear are nobody's.
 *
 * Ownership is rendered into `metadata.managedFields` in the real `FieldsV1` shape
 * (`{"f:spec": {"f:replicas": {}}}`).
 */
import { isDeepStrictEqual } from 'node:util';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
type Path = readonly string[];

export interface ManagerEntry {
  readonly manager: string;
  readonly operation: 'Apply' | 'Update';
  readonly subresource: string;
  readonly apiVersion: string;
  time: string;
  fields: Set<string>;
}

export interface FieldConflict {
  readonly manager: string;
  readonly field: string;
}

function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const key = (path: Path): string => JSON.stringify(path);
const unkey = (text: string): string[] => JSON.parse(text) as string[];

/** The leaf paths of `value`, as keys. An empty object is a leaf (it says "this map exists"). */
export function leaves(value: Json, prefix: Path = []): string[] {
  if (!isObject(value) || (Object.keys(value).length === 0 && prefix.length > 0)) return [key(prefix)];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, [...prefix, k]));
}

export function getAt(value: Json | undefined, path: Path): Json | undefined {
  let current = value;
  for (const segment of path) {
    if (!isObject(current)) return undefined;
    current = current[segment];
  }
  return current;
}

function setAt(target: JsonObject, path: Path, value: Json): void {
  let current = target;
  for (const segment of path.slice(0, -1)) {
    const next = current[segment];
    if (!isObject(next)) current[segment] = {};
    current = current[segment] as JsonObject;
  }
  current[path[path.length - 1]!] = structuredClone(value);
}

/** Removes the leaf and then every parent object it leaves empty. */
function removeAt(target: JsonObject, path: Path): void {
  const parents: JsonObject[] = [target];
  for (const segment of path.slice(0, -1)) {
    const next = parents[parents.length - 1]![segment];
    if (!isObject(next)) return;
    parents.push(next);
  }
  delete parents[parents.length - 1]![path[path.length - 1]!];
  for (let i = parents.length - 1; i > 0; i--) {
    if (Object.keys(parents[i]!).length > 0) break;
    delete parents[i - 1]![path[i - 1]!];
  }
}

/** One path is the other or lies inside it. */
function overlaps(a: Path, b: Path): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface ApplyOutcome {
  readonly object?: JsonObject;
  readonly conflicts: readonly FieldConflict[];
}

/**
 * Applies `applied` (already cut to the fields this subresource may set) onto `scoped` (the
 * object's fields in the same scope) for `manager`; mutates `entries` only when it succeeds.
 */
export function apply(scoped: JsonObject, applied: JsonObject, self: ManagerEntry, entries: ManagerEntry[], force: boolean): ApplyOutcome {
  const appliedLeaves = leaves(applied).filter((l) => unkey(l).length > 0);
  const others = entries.filter((e) => e !== self);
  const conflicts: FieldConflict[] = [];
  for (const leaf of appliedLeaves) {
    const path = unkey(leaf);
    for (const other of others) {
      for (const owned of other.fields) {
        const ownedPath = unkey(owned);
        if (!overlaps(path, ownedPath)) continue;
        const at = path.length <= ownedPath.length ? path : ownedPath;
        if (!isDeepStrictEqual(getAt(scoped, at), getAt(applied, at))) conflicts.push({ manager: other.manager, field: `.${at.join('.')}` });
      }
    }
  }
  if (conflicts.length > 0 && !force) return { conflicts };

  const result = structuredClone(scoped);
  const removed = [...self.fields].filter((f) => !appliedLeaves.includes(f));
  for (const leaf of removed) {
    const path = unkey(leaf);
    if (!others.some((o) => [...o.fields].some((f) => overlaps(unkey(f), path)))) removeAt(result, path);
  }
  for (const leaf of appliedLeaves) setAt(result, unkey(leaf), getAt(applied, unkey(leaf)) as Json);
  if (force) {
    for (const other of others) {
      for (const owned of [...other.fields]) {
        const ownedPath = unkey(owned);
        const differs = (l: string): boolean => overlaps(unkey(l), ownedPath) && !isDeepStrictEqual(getAt(scoped, ownedPath), getAt(result, ownedPath));
        if (appliedLeaves.some(differs)) other.fields.delete(owned);
      }
    }
  }
  self.fields = new Set(appliedLeaves);
  return { object: result, conflicts };
}

/** Records a non-apply write: changed and new leaves become `self`'s, vanished leaves nobody's. */
export function recordUpdate(before: JsonObject, after: JsonObject, self: ManagerEntry, entries: readonly ManagerEntry[]): void {
  const beforeLeaves = new Set(leaves(before).filter((l) => unkey(l).length > 0));
  const afterLeaves = leaves(after).filter((l) => unkey(l).length > 0);
  const afterSet = new Set(afterLeaves);
  const changed = afterLeaves.filter((l) => !beforeLeaves.has(l) || !isDeepStrictEqual(getAt(before, unkey(l)), getAt(after, unkey(l))));
  for (const entry of entries) {
    for (const owned of [...entry.fields]) {
      if (!afterSet.has(owned) || (entry !== self && changed.includes(owned))) entry.fields.delete(owned);
    }
  }
  for (const leaf of changed) self.fields.add(leaf);
}

/** `{"f:spec": {"f:replicas": {}}}` — the FieldsV1 encoding of a set of leaves. */
export function fieldsV1(fields: ReadonlySet<string>): JsonObject {
  const root: JsonObject = {};
  for (const leaf of fields) {
    let node = root;
    for (const segment of unkey(leaf)) {
      const name = `f:${segment}`;
      node[name] ??= {};
      node = node[name] as JsonObject;
    }
  }
  return root;
}
