import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so equal values always serialise identically.
 *
 * Written by JSON.stringify itself with a property list: the list (every key of the value, in
 * the order sortKeys gives — array-index keys ascending by number, then the rest sorted) orders
 * the keys of every object it writes, so no sorted copy of each object is built first (the
 * first translation at 10k routes writes ~20k entries: ~40 of its CPU-ms went to the copies).
 * A value the list cannot write exactly like the copy — a key `__proto__` or another one
 * Object.prototype holds data under, an object that is not plain data (a prototype other than
 * Object's or null, a toJSON) — is written through the copy.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const keys = new Set<string>();
  if (!collectKeys(value, keys)) return JSON.stringify(sortKeys(value));
  const list = listOrder(keys);
  if (list === undefined) return JSON.stringify(sortKeys(value));
  return JSON.stringify(value, list);
}

/** Every own enumerable key of every object in `value` into `keys`; false when `value` holds something only the copy writes right. */
function collectKeys(value: object, keys: Set<string>): boolean {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && typeof item === 'object' && !collectKeys(item, keys)) return false;
    }
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) {
    // for-in also walks inherited keys: only the plain prototypes above, which have no enumerable ones.
    keys.add(key);
    const item: unknown = (value as Record<string, unknown>)[key];
    if (item !== null && typeof item === 'object' && !collectKeys(item, keys)) return false;
  }
  return true;
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
const isArrayIndex = (key: string): boolean => ARRAY_INDEX.test(key) && Number(key) < 4294967295;

/**
 * The keys in the order an object built by inserting them sorted would list them (array-index
 * keys first, ascending by number: that is how objects order own keys); undefined when a key
 * would read a data value from Object.prototype on an object that lacks it (`__proto__`).
 */
function listOrder(keys: Set<string>): string[] | undefined {
  const indices: string[] = [];
  const names: string[] = [];
  for (const key of keys) {
    if (key in Object.prototype && typeof (Object.prototype as Record<string, unknown>)[key] !== 'function') return undefined;
    (isArrayIndex(key) ? indices : names).push(key);
  }
  names.sort();
  if (indices.length === 0) return names;
  indices.sort((a, b) => Number(a) - Number(b));
  return [...indices, ...names];
}

/** A copy of `value` with every object's keys inserted in sorted order (the reference canonicalJson's output follows). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** First 16 hex characters of the sha256 of the canonical JSON: the config version. */
export function contentHash(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex').slice(0, 16);
}
