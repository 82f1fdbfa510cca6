/**
 * A ProxyConfig made from the previous one and a change (issue 15: one route edit in a config of
 * 10,000). Whoever builds the new config's records from the old ones knows what changed; it says
 * so here, and readers that would otherwise compare every entry (validateConfig) ask instead, so
 * their cost follows the change, not the config. The records themselves stay plain objects in key
 * order, every unchanged entry the previous object.
 *
 * A delta is only ever recorded by patchConfig, which builds the config from exactly that change,
 * so a reader can trust it; any config it did not build has no delta and is read whole.
 */
import type { Backend, Bind, ProxyConfig, Route } from './types.ts';

/** New or changed entries of a record, and the keys removed from it. */
export interface RecordPatch<T> {
  readonly set: Readonly<Record<string, T>>;
  readonly removed: readonly string[];
}

/** What changed from `from` to the config it is recorded for. */
export interface ConfigDelta {
  /** Weak: a chain of patched configs must not keep every earlier config (and its records) alive. */
  readonly from: WeakRef<ProxyConfig>;
  /** Route keys set (new or changed). */
  readonly routesSet: readonly string[];
  readonly routesRemoved: readonly string[];
  readonly backendsSet: readonly string[];
  readonly backendsRemoved: readonly string[];
}

const deltas = new WeakMap<ProxyConfig, ConfigDelta>();

/** The delta `config` was built with from `previous` (patchConfig), or undefined when it was not. */
export function deltaFrom(config: ProxyConfig, previous: ProxyConfig): ConfigDelta | undefined {
  const delta = deltas.get(config);
  return delta !== undefined && delta.from.deref() === previous ? delta : undefined;
}

/**
 * `previous` with the routes and backends of the patch set and removed, and `binds` as given:
 * every entry not in the patch is the previous object, records stay in key order.
 */
export function patchConfig(previous: ProxyConfig, version: string, binds: Bind[], routes: RecordPatch<Route>, backends: RecordPatch<Backend>): ProxyConfig {
  const config: ProxyConfig = { version, binds, routes: patchRecord(previous.routes, routes), backends: patchRecord(previous.backends, backends) };
  const present = (record: Readonly<Record<string, unknown>>, removed: readonly string[]) => removed.filter((key) => Object.hasOwn(record, key));
  deltas.set(config, {
    from: new WeakRef(previous),
    routesSet: Object.keys(routes.set),
    routesRemoved: present(previous.routes, routes.removed),
    backendsSet: Object.keys(backends.set),
    backendsRemoved: present(previous.backends, backends.removed),
  });
  return config;
}

/**
 * The keys of a record this module built, in order: a record of 10,000 keys is a dictionary-mode
 * object, which V8 copies by spread at ~5 ms (and Object.keys at ~1 ms); assigning the keys of a
 * known array into a new object takes ~1 ms. The array is shared by the records with the same keys.
 */
const keysOf = new WeakMap<object, readonly string[]>();

/**
 * A record's keys in order, kept for the record (never change a record after asking). Readers
 * that walk a whole record anyway — validateConfig on a config that came whole, at start-up —
 * take its keys here, so the first patch of that record finds them kept instead of running
 * Object.keys over 10k entries on the edit path (4–12 ms on the serving thread's first edit).
 */
export function recordKeys(record: Readonly<Record<string, unknown>>): readonly string[] {
  return orderedKeys(record);
}

function orderedKeys(record: Readonly<Record<string, unknown>>): readonly string[] {
  let keys = keysOf.get(record);
  if (keys === undefined) {
    keys = Object.keys(record);
    keysOf.set(record, keys);
  }
  return keys;
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `previous` with the patch applied, in key order (a new key is placed by sorting the keys). */
export function patchRecord<T>(previous: Readonly<Record<string, T>>, patch: RecordPatch<T>): Readonly<Record<string, T>> {
  const { set } = patch;
  // Nothing to change (an EndpointSlice edit leaves the routes alone): the same record, not a copy
  // of its 10k keys — records are never changed once made, so two configs may share one.
  let unchanged = true;
  for (const _ in set) {
    unchanged = false;
    break;
  }
  if (unchanged && !patch.removed.some((key) => Object.hasOwn(previous, key))) return previous;
  const before = orderedKeys(previous);
  const added = Object.keys(set).filter((key) => !Object.hasOwn(previous, key));
  const removed = patch.removed.length === 0 ? undefined : new Set(patch.removed.filter((key) => Object.hasOwn(previous, key)));
  const keys = added.length === 0 && removed === undefined ? before : [...(removed ? before.filter((key) => !removed.has(key)) : before), ...added].sort(compareStrings);
  const out: Record<string, T> = {};
  if (keys === before) {
    // The same keys (the common case: entries changed in place): every previous entry, then the
    // patch over it, with no look-up in `set` per key.
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      out[key] = previous[key] as T;
    }
    for (const key of Object.keys(set)) out[key] = set[key] as T;
  } else {
    for (const key of keys) out[key] = (Object.hasOwn(set, key) ? set[key] : previous[key]) as T;
  }
  keysOf.set(out, keys);
  return out;
}

/** How many entries a record has: from the kept key list when this module built it (no walk of its keys). */
export function recordSize(record: Readonly<Record<string, unknown>>): number {
  return (keysOf.get(record) ?? Object.keys(record)).length;
}
