// crypto.hash: one call per digest, no Hash object (20k entry digests on a first translation).
import { hash } from 'node:crypto';
import type { ProxyConfig } from '../../ir/types.ts';
import { canonicalJson } from './hash.ts';

/** The config without its version. */
export type ConfigBody = Omit<ProxyConfig, 'version'>;

/**
 * Buckets per record. A key's bucket is a hash of the key alone, so the version does not depend
 * on the order entries were added in; an edit of one entry rehashes its bucket (~40 lines at 10k
 * routes) and the 2 × 256 bucket digests instead of all 20k lines (~1.3 MB of sha256 per edit).
 */
const BUCKETS = 256;

/**
 * The config version: 16 hex characters of a sha256 over the sha256 of the binds' canonical JSON
 * and, for each Route and Backend bucket that has entries, the bucket's number and the sha256 of
 * its lines — each entry's key and the sha256 of its canonical JSON, in key order within the
 * bucket. Equal bodies give equal versions whatever their key order or the edits that led to them
 * (the buckets are a function of the keys alone); any change to an entry changes it. The
 * incremental translator (incremental.ts) keeps each entry's digest and each bucket's, and
 * rehashes only the buckets an edit touched (VersionParts).
 */
export function configVersion(body: ConfigBody, digestOf: (entry: object) => string = entryDigest): string {
  return versionOf(bindsDigest(body.binds), recordBuckets('route', body.routes, digestOf), recordBuckets('backend', body.backends, digestOf));
}

/** What a change to one record says: the keys whose entries are new or changed, and the keys dropped. */
export interface KeyChanges {
  readonly set: Readonly<Record<string, unknown>>;
  readonly removed: readonly string[];
}

/**
 * The version's pieces kept between results by the incremental translator (incremental.ts): the
 * binds' digest per binds array and, per record, each bucket's keys and digest. `version()` is
 * given what changed in each record since the previous call (undefined: rebuild that record's
 * buckets) and gives configVersion()'s answer for the same body.
 */
export class VersionParts {
  readonly #binds = new WeakMap<object, string>();
  readonly #routes = new KeptBuckets('route');
  readonly #backends = new KeptBuckets('backend');

  version(body: ConfigBody, digestOf: (entry: object) => string, changes: { readonly routes: KeyChanges; readonly backends: KeyChanges } | undefined): string {
    let binds = this.#binds.get(body.binds);
    if (binds === undefined) this.#binds.set(body.binds, (binds = bindsDigest(body.binds)));
    return versionOf(binds, this.#routes.update(body.routes, digestOf, changes?.routes), this.#backends.update(body.backends, digestOf, changes?.backends));
  }
}

class KeptBuckets {
  readonly #label: string;
  #keys: Set<string>[] | undefined;
  readonly #digests: (string | undefined)[] = new Array<string | undefined>(BUCKETS).fill(undefined);

  constructor(label: string) {
    this.#label = label;
  }

  update(record: Readonly<Record<string, object>>, digestOf: (entry: object) => string, changes: KeyChanges | undefined): readonly (string | undefined)[] {
    let keys = this.#keys;
    const dirty = new Set<number>();
    if (keys === undefined || changes === undefined) {
      keys = this.#keys = Array.from({ length: BUCKETS }, () => new Set<string>());
      for (const key of Object.keys(record)) (keys[bucketOf(key)] as Set<string>).add(key);
      for (let b = 0; b < BUCKETS; b++) dirty.add(b);
    } else {
      for (const key in changes.set) {
        const b = bucketOf(key);
        (keys[b] as Set<string>).add(key);
        dirty.add(b);
      }
      for (const key of changes.removed) {
        const b = bucketOf(key);
        (keys[b] as Set<string>).delete(key);
        dirty.add(b);
      }
    }
    for (const b of dirty) this.#digests[b] = bucketDigest(this.#label, [...(keys[b] as Set<string>)], record, digestOf);
    return this.#digests;
  }
}

function versionOf(binds: string, routes: readonly (string | undefined)[], backends: readonly (string | undefined)[]): string {
  let text = `binds ${binds}\n`;
  for (const [label, buckets] of [['route', routes], ['backend', backends]] as const) {
    for (let b = 0; b < BUCKETS; b++) if (buckets[b] !== undefined) text += `${label} ${b} ${buckets[b]}\n`;
  }
  return hash('sha256', text, 'hex').slice(0, 16);
}

function bindsDigest(binds: ConfigBody['binds']): string {
  return hash('sha256', canonicalJson(binds), 'base64');
}

function recordBuckets(label: string, record: Readonly<Record<string, object>>, digestOf: (entry: object) => string): (string | undefined)[] {
  const keys: string[][] = Array.from({ length: BUCKETS }, () => []);
  for (const key of Object.keys(record)) (keys[bucketOf(key)] as string[]).push(key);
  return keys.map((inBucket) => bucketDigest(label, inBucket, record, digestOf));
}

/** undefined for an empty bucket (it is left out of the version). */
function bucketDigest(label: string, keys: string[], record: Readonly<Record<string, object>>, digestOf: (entry: object) => string): string | undefined {
  if (keys.length === 0) return undefined;
  keys.sort();
  let text = '';
  // JSON-quoted keys: no key can end early or run into its digest.
  for (const key of keys) text += `${label} ${JSON.stringify(key)} ${digestOf(record[key] as object)}\n`;
  return hash('sha256', text, 'base64');
}

/** FNV-1a (32-bit) of the key's UTF-16 code units, to a bucket: a function of the key alone. */
function bucketOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % BUCKETS;
}

/** sha256 (base64) of an entry's canonical JSON. */
export function entryDigest(entry: object): string {
  return hash('sha256', canonicalJson(entry), 'base64');
}
