import { createHash } from 'node:crypto';
import type { ProxyConfig } from '../../ir/types.ts';
import { canonicalJson } from './hash.ts';

/** The config without its version. */
export type ConfigBody = Omit<ProxyConfig, 'version'>;

/**
 * The config version: 16 hex characters of a sha256 over the binds' canonical JSON and, for each
 * Route and Backend in key order, its key and the sha256 of its canonical JSON. Equal bodies give
 * equal versions whatever their key order; any change to an entry changes it. Hashing each entry
 * on its own (a two-level hash) lets the incremental translator (incremental.ts) keep each
 * unchanged entry's digest and hash only ~70 bytes per entry per change instead of re-serialising
 * the whole config (10k routes: ~30 ms → ~3 ms).
 */
export function configVersion(body: ConfigBody, digestOf: (entry: object) => string = entryDigest, kept?: VersionParts): string {
  const hash = createHash('sha256');
  hash.update(`binds ${kept ? kept.bindsJson(body.binds) : canonicalJson(body.binds)}\n`);
  updateRecord(hash, 'route', body.routes, digestOf, kept);
  updateRecord(hash, 'backend', body.backends, digestOf, kept);
  return hash.digest('hex').slice(0, 16);
}

/**
 * The pieces of the version kept per IR object by the incremental translator (incremental.ts):
 * the binds' canonical JSON per binds array and each entry's line per entry object. Valid only
 * for objects that are never changed in place (the translator builds new ones for new content).
 */
export class VersionParts {
  readonly #binds = new WeakMap<object, string>();
  readonly #lines = new WeakMap<object, { readonly key: string; readonly label: string; readonly line: string }>();
  readonly #keys = new WeakMap<object, readonly string[]>();

  /** The keys of `record` in order, known to its builder: the version reads them instead of Object.keys() of 10k entries. */
  setKeys(record: object, keys: readonly string[]): void {
    this.#keys.set(record, keys);
  }

  keysOf(record: object): readonly string[] | undefined {
    return this.#keys.get(record);
  }

  bindsJson(binds: ConfigBody['binds']): string {
    let json = this.#binds.get(binds);
    if (json === undefined) this.#binds.set(binds, (json = canonicalJson(binds)));
    return json;
  }

  line(label: string, key: string, entry: object, digestOf: (entry: object) => string): string {
    const kept = this.#lines.get(entry);
    if (kept !== undefined && kept.key === key && kept.label === label) return kept.line;
    const line = lineOf(label, key, digestOf(entry));
    this.#lines.set(entry, { key, label, line });
    return line;
  }
}

// JSON-quoted keys: no key can end early or run into its digest.
const lineOf = (label: string, key: string, digest: string): string => `${label} ${JSON.stringify(key)} ${digest}\n`;

/** sha256 (base64) of an entry's canonical JSON. */
export function entryDigest(entry: object): string {
  return createHash('sha256').update(canonicalJson(entry)).digest('base64');
}

function updateRecord(hash: ReturnType<typeof createHash>, label: string, record: Readonly<Record<string, object>>, digestOf: (entry: object) => string, kept: VersionParts | undefined): void {
  const given = kept?.keysOf(record);
  const keys = given ? [...given] : Object.keys(record);
  // translate() sorts its records already; sorting again is only needed when they are not.
  if (!keys.every((key, i) => i === 0 || (keys[i - 1] as string) < key)) keys.sort();
  const parts: string[] = [];
  for (const key of keys) parts.push(kept ? kept.line(label, key, record[key] as object, digestOf) : lineOf(label, key, digestOf(record[key] as object)));
  // One update of the joined text: many small updates cost more than the join.
  hash.update(parts.join(''));
}
