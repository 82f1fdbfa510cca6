/**
 * Translation across a stream of changes (issue 15): the objects are held here and changed by
 * delta (`apply`), and each result says which IR objects changed since the previous one, so the
 * translator thread sends back only those and the gateway keeps every unchanged Route and Backend
 * as the same JS object (the proxy's compile caches and the remote slices key on identity).
 *
 * The result is exactly translate()'s for the same objects (incremental.test.ts checks it over a
 * table of edits). What is reused from one result to the next:
 *   - the digest of each Route's and Backend's canonical JSON (cached per IR object), and the
 *     version's bucket digests (version.ts): an edit rehashes only the buckets it touched;
 *   - unchanged IR objects themselves: a Route or Backend whose digest did not change is replaced
 *     by the previous object, so identity follows content.
 */
import type { KubeObject } from '../../api/gateway/object.ts';
import type { Backend, ProxyConfig, Route } from '../../ir/types.ts';
import { recordOf, translateBody, type TranslateOptions, type TranslateResult } from './index.ts';
import { ApplyMemo } from './policy/apply-memo.ts';
import { PolicyPassMemo } from './policy/pass-memo.ts';
import { RouteMemo } from './route-memo.ts';
import { BindsMemo } from './binds-memo.ts';
import { RouteLoopMemo } from './route-loop.ts';
import { sameJson } from './same-json.ts';
import { IndexCache, RouteOrderCache } from './snapshot.ts';
import { StatusOrder } from './status-order.ts';
import { StatusLog } from './status-log.ts';
import { RecordPointers, ScrubbedList } from './secret-ledger.ts';
import { entryDigest, VersionParts, type ConfigBody } from './version.ts';
import { diffObjects, objectKeyOf, type ConfigChanges, type ObjectDelta, type RecordChanges } from './object-delta.ts';

export { diffObjects, objectKeyOf, statusId, type ConfigChanges, type ObjectDelta, type RecordChanges } from './object-delta.ts';

export interface IncrementalResult extends TranslateResult {
  readonly changes: ConfigChanges;
}


/** Digest per IR object (version.ts): an object the translator (or this class) reuses is serialised and hashed once. */
const digests = new WeakMap<object, string>();

function digestOf(value: object): string {
  let digest = digests.get(value);
  if (digest === undefined) {
    digest = entryDigest(value);
    digests.set(value, digest);
  }
  return digest;
}

export interface IncrementalOptions {
  /**
   * The caller keeps no result's `config.routes` (nor a first result's `changes.routes.set`, the
   * same record) past its next replace() or apply() (a thread that
   * sends on only the changes): an edit that keeps every route key then patches the previous
   * routes record in place — the result's record is the previous one's object, changed — instead
   * of building a new 10k-key record per result (~1 ms and ~0.5 MiB of garbage per edit).
   */
  readonly patchRecords?: boolean;
  /**
   * false: the caller never reads `changes.statuses` (the embedded config thread keeps the
   * statuses and writes them itself): it is undefined — "take `statuses` whole" — on every
   * result and no status log runs: on the first result that is an id, a Set entry and a record
   * entry for each of 11k statuses (12–30 ms cold), on an edit a walk of the 11k positions.
   */
  readonly statusChanges?: boolean;
}

export class IncrementalTranslator {
  readonly #options: Partial<TranslateOptions>;
  readonly #patchRecords: boolean;
  #objects = new Map<string, KubeObject>();
  #unkeyed: KubeObject[] = [];
  /** The list the last replace() was given when its objects were held by key (a copy: the caller may change its own). */
  #given: readonly KubeObject[] | undefined;
  /** The previous result's records; its route keys in order and the routes at those positions (as in its record). */
  #previous: { binds: ConfigBody['binds']; routes: Readonly<Record<string, Route>>; backends: Readonly<Record<string, Backend>>; routeCount: number; routeKeys: readonly string[]; routeValues: readonly Route[] } | undefined;
  readonly #statuses: StatusLog | undefined;
  readonly #version = new VersionParts();
  readonly #routes = new RouteMemo();
  readonly #applied = new ApplyMemo();
  readonly #pass = new PolicyPassMemo();
  readonly #routeOrder = new RouteOrderCache();
  readonly #index = new IndexCache();
  readonly #binds = new BindsMemo();
  readonly #loop = new RouteLoopMemo();
  readonly #statusOrder = new StatusOrder();
  readonly #secretRoutes = new RecordPointers();
  readonly #scrubbed = new ScrubbedList();

  constructor(options: Partial<TranslateOptions> = {}, incremental: IncrementalOptions = {}) {
    this.#options = options;
    this.#patchRecords = incremental.patchRecords === true;
    this.#statuses = incremental.statusChanges === false ? undefined : new StatusLog();
  }

  /** Replaces the whole object set (computing the delta by identity) and translates. */
  replace(objects: readonly KubeObject[]): IncrementalResult {
    const diff = this.#inPlace(objects) ?? diffObjects(this.#objects, objects);
    this.#given = diff ? objects.slice() : undefined;
    if (diff) {
      this.#invalidate(diff.delta);
      this.#objects = diff.next;
      this.#unkeyed = [];
    } else {
      this.#routes.clear();
      this.#applied.clear();
      this.#pass.clearReads();
      this.#binds.clear();
      this.#loop.clear();
      this.#objects = new Map();
      this.#unkeyed = [...objects];
    }
    return this.#translate();
  }

  /**
   * The delta when `objects` has as many objects as the previous replace() and each one that is a
   * different object has the key of the one at its place before (a file or watch edit: a source
   * keeps an object's place when it replaces it): a walk by position, no key lookups for the 11k
   * unchanged objects. The held map keeps its order (the same keys in the same places).
   */
  #inPlace(objects: readonly KubeObject[]): { delta: ObjectDelta; next: Map<string, KubeObject> } | undefined {
    const given = this.#given;
    if (given === undefined || given.length !== objects.length) return undefined;
    const upserted: KubeObject[] = [];
    for (let i = 0; i < objects.length; i++) {
      const now = objects[i] as KubeObject;
      const was = given[i] as KubeObject;
      if (now === was) continue;
      const key = objectKeyOf(now);
      if (key === undefined || key !== objectKeyOf(was)) return undefined;
      upserted.push(now);
    }
    for (const object of upserted) this.#objects.set(objectKeyOf(object) as string, object);
    return { delta: { upserted, removed: [] }, next: this.#objects };
  }

  /** Applies a delta to the held objects and translates. */
  apply(delta: ObjectDelta): IncrementalResult {
    this.#given = undefined;
    this.#invalidate(delta);
    for (const key of delta.removed) this.#objects.delete(key);
    for (const object of delta.upserted) {
      const key = objectKeyOf(object);
      if (key === undefined) this.#unkeyed.push(object);
      else this.#objects.set(key, object);
    }
    return this.#translate();
  }

  /** Forgets the previous result: the next one is full (its receiver lost track). */
  resetChanges(): void {
    this.#previous = undefined;
    this.#statuses?.reset();
  }

  /**
   * Route translations, policy reads and policies applied to routes stay valid while only routes
   * and policies change (route-memo.ts, policy/pass-memo.ts, policy/apply-memo.ts: the latter
   * also checks the attachments each kept result looked up).
   */
  #invalidate(delta: ObjectDelta): void {
    const routeOrPolicy = (kind: string): boolean => kind === 'HTTPRoute' || kind === 'ProxyPolicy';
    const kindOfKey = (key: string): string => key.slice(0, key.indexOf('/'));
    if (delta.upserted.every((o) => objectKeyOf(o) !== undefined && routeOrPolicy(o.kind)) && delta.removed.every((key) => routeOrPolicy(kindOfKey(key)))) return;
    this.#routes.clear();
    this.#applied.clear();
    this.#pass.clearReads();
    this.#binds.clear();
    this.#loop.clear();
  }

  #translate(): IncrementalResult {
    // The list replace() was given holds the held objects in the held map's order (diffObjects
    // builds the map in list order; #inPlace keeps every key at its place): no walk of the map.
    const objects = this.#unkeyed.length === 0 ? (this.#given ?? [...this.#objects.values()]) : [...this.#objects.values(), ...this.#unkeyed];
    const previous = this.#previous;
    // patchRecords: the previous record patched in place when the route keys are the previous ones (the same array).
    const patched: { changes?: RecordChanges<Route> } = {};
    const routesRecord = this.#patchRecords && previous !== undefined
      ? (keys: readonly string[], values: Route[]): Record<string, Route> => {
        if (keys !== previous.routeKeys) return recordOf(keys, values);
        const record = previous.routes as Record<string, Route>;
        patched.changes = patchInPlace(record, keys, values, previous.routeValues);
        return record;
      }
      : undefined;
    const { body, statuses, ledger, routeKeys, routeValues } = translateBody(objects, this.#options, this.#unkeyed.length === 0 ? { routes: this.#routes, policies: this.#applied, pass: this.#pass, routeOrder: this.#routeOrder, index: this.#index, binds: this.#binds, loop: this.#loop, statusOrder: this.#statusOrder, scrubbed: this.#scrubbed, ...(routesRecord ? { routesRecord } : {}) } : undefined);
    const routes = patched.changes !== undefined
      ? { record: body.routes, changes: patched.changes }
      : previous !== undefined && previous.routeKeys === routeKeys ? reuseInPlace(body.routes, routeKeys, routeValues, previous.routeValues) : reuse(body.routes, previous?.routes, routeKeys, previous?.routeCount, routeValues);
    const backends = reuse(body.backends, previous?.backends);
    // Binds equal to the previous ones stay the previous object: their canonical JSON is kept with it.
    const binds = previous !== undefined && sameJson(previous.binds, body.binds) ? previous.binds : body.binds;
    const stable: ConfigBody = { binds, routes: routes.record, backends: backends.record };
    // The first result (or one after resetChanges) rebuilds the version's buckets; later ones rehash those the changes touch.
    const config: ProxyConfig = { version: this.#version.version(stable, digestOf, previous === undefined ? undefined : { routes: routes.changes, backends: backends.changes }), ...stable };
    const statusSet = this.#statuses?.next(statuses);
    this.#previous = { binds, routes: config.routes, backends: config.backends, routeCount: routeKeys.length, routeKeys, routeValues };
    return {
      config,
      statuses,
      // The routes' secret pointers kept per key: an edit looks again only at the routes it changed.
      secretPaths: ledger.locate(config, { key: 'routes', pointers: this.#secretRoutes, changed: previous === undefined ? undefined : routes.changes }),
      secretValues: ledger.values(),
      changes: { full: previous === undefined, routes: routes.changes, backends: backends.changes, statuses: statusSet },
    };
  }
}

/**
 * `record` with each entry whose content equals the previous one's replaced by the previous object.
 * `record` is the translation's own fresh record: it is changed in place (no second 10k-entry record),
 * and so is `values`, the entries at `keys`' positions, when given.
 */
function reuse<T extends object>(record: Record<string, T>, previous: Readonly<Record<string, T>> | undefined, keys?: readonly string[], previousCount?: number, values?: T[]): { record: Record<string, T>; changes: RecordChanges<T> } {
  // The first result: every entry is set, and the record itself says so (not a second 10k-key
  // record with the same entries in the same order). Nothing changes a result's record after it
  // is returned, except patchRecords' next call — whose caller keeps neither (IncrementalOptions).
  if (previous === undefined) return { record, changes: { set: record, removed: [] } };
  const set: Record<string, T> = {};
  let kept = 0;
  // `keys`: the record's keys as its builder knows them, walked instead of the 10k-key record itself.
  const walked = keys ?? Object.keys(record);
  // Indexed: a for-of allocates an iterator result per key while this runs unoptimised (the first edits).
  for (let i = 0; i < walked.length; i++) {
    const key = walked[i] as string;
    const value = record[key] as T;
    const before = previous?.[key];
    if (before === undefined) {
      set[key] = value;
    } else if (before === value || digestOf(before) === digestOf(value)) {
      record[key] = before;
      // `values` (the routes at `keys`' positions) stays what the record holds: the next reuseInPlace() compares with it.
      if (values !== undefined) values[i] = before;
      kept++;
    } else {
      set[key] = value;
      kept++;
    }
  }
  // Every previous key is still here when as many were found as there were: no removal pass.
  const removed = previous === undefined || kept === (previousCount ?? countKeys(previous)) ? [] : Object.keys(previous).filter((key) => !Object.hasOwn(record, key));
  return { record, changes: { set, removed } };
}

/**
 * reuse() when the routes have the very keys, in the same order, as the previous result's
 * (`keys` is the same array: translateBody keeps it while the routes map keeps its keys — an edit
 * that changes routes in place): the previous route at each position is known, so no key is
 * looked up in either 10k-key record. `values` (the routes at `keys`' positions) is updated along
 * with `record`, and is the next call's `previousValues`.
 */
function reuseInPlace(record: Record<string, Route>, keys: readonly string[], values: Route[], previousValues: readonly Route[]): { record: Record<string, Route>; changes: RecordChanges<Route> } {
  const set: Record<string, Route> = {};
  for (let i = 0; i < keys.length; i++) {
    const value = values[i] as Route;
    const before = previousValues[i] as Route;
    if (before === value) continue;
    const key = keys[i] as string;
    if (digestOf(before) === digestOf(value)) {
      record[key] = before;
      values[i] = before;
    } else {
      set[key] = value;
    }
  }
  return { record, changes: { set, removed: [] } };
}

/**
 * reuseInPlace() on the previous result's own record (patchRecords): `record` holds the previous
 * routes, so a route whose content changed is written into it, and one equal to the previous is
 * left as it is (its position in `values` takes the previous object, as in reuseInPlace()).
 */
function patchInPlace(record: Record<string, Route>, keys: readonly string[], values: Route[], previousValues: readonly Route[]): RecordChanges<Route> {
  const set: Record<string, Route> = {};
  for (let i = 0; i < keys.length; i++) {
    const value = values[i] as Route;
    const before = previousValues[i] as Route;
    if (before === value) continue;
    if (digestOf(before) === digestOf(value)) {
      values[i] = before;
    } else {
      const key = keys[i] as string;
      record[key] = value;
      set[key] = value;
    }
  }
  return { set, removed: [] };
}

function countKeys(record: Readonly<Record<string, unknown>>): number {
  let n = 0;
  for (const _ in record) n++;
  return n;
}
