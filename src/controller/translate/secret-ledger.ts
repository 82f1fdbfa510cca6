import type { KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import { MIN_CONTAINED_LENGTH, SecretMatcher } from '../../common/secret-matcher.ts';
import { canonicalJson } from './hash.ts';
import { isDict, stringRecord } from './read.ts';

/**
 * Provenance of Secret data in one translation. Every Secret the translator reads is read through
 * `entries()`, and every value it derives from one (a prefix stripped, a line of a password file,
 * a key's hash, a JSON entry's fields) is recorded where it is derived. The translator then knows
 * which IR locations carry Secret data (`locate`, for /config_dump) and can keep Secret data out
 * of the status messages it writes (`scrubStatuses`).
 *
 * Certificates are public: a value that is nothing but PEM CERTIFICATE blocks is not recorded, so
 * /config_dump keeps showing which certificate a listener serves. A value that mixes a certificate
 * with a private key is recorded whole.
 */
/**
 * Pointers into one record of the config (`/routes/<key>/…`) kept by the incremental translator
 * between results: per entry key, the pointers found in it, and the values' signature they were
 * found under. locate() then looks only at the entries `changed` names (the record's changes
 * since the result it was last given; undefined: look at every entry).
 */
export class RecordPointers {
  signature: number | undefined;
  readonly byKey = new Map<string, readonly string[]>();
}

/** The previous scrubStatuses() list of an incremental translator: its input and output by position. */
export class ScrubbedList {
  last: { readonly signature: number; readonly input: readonly ObjectStatus[]; readonly output: readonly ObjectStatus[] } | undefined;
}

export interface KeptRecord {
  readonly key: string;
  readonly pointers: RecordPointers;
  readonly changed: { readonly set: Readonly<Record<string, unknown>>; readonly removed: readonly string[] } | undefined;
}

/** What one captured read recorded in a ledger (SecretLedger.capture). */
export interface LedgerRecord {
  readonly values: readonly string[];
  readonly textOnly: readonly string[];
  readonly trees: readonly object[];
}

export class SecretLedger {
  readonly #values = new Set<string>();
  /** Fields inside JSON values (a service-account key's private_key): the IR holds the whole JSON, so these only matter in text. */
  readonly #textOnly = new Set<string>();
  readonly #trees = new Set<object>();
  #matcher: SecretMatcher | undefined;
  #textMatcher: SecretMatcher | undefined;
  #touches = 0;
  /** While capture() runs: what is recorded, to be replayed into another translation's ledger. */
  #log: { values: string[]; textOnly: string[]; trees: object[] } | undefined;

  /**
   * `read()`'s result and what it recorded here (undefined when it recorded nothing), so a
   * memoized read can be given to a later translation's ledger with `replay` instead of reading
   * the Secret again (policy/pass-memo.ts).
   */
  capture<T>(read: () => T): { readonly result: T; readonly recorded: LedgerRecord | undefined } {
    const outer = this.#log;
    const log = { values: [] as string[], textOnly: [] as string[], trees: [] as object[] };
    const touches = this.#touches;
    this.#log = log;
    try {
      const result = read();
      return { result, recorded: this.#touches === touches ? undefined : log };
    } finally {
      this.#log = outer;
      if (outer) {
        outer.values.push(...log.values);
        outer.textOnly.push(...log.textOnly);
        outer.trees.push(...log.trees);
      }
    }
  }

  /** Records here what a captured read recorded (the same values, text-only fields and trees). */
  replay(recorded: LedgerRecord): void {
    for (const value of recorded.values) this.record(value);
    for (const value of recorded.textOnly) this.#recordTextOnly(value);
    for (const tree of recorded.trees) {
      this.#touches++;
      this.#trees.add(tree);
      this.#log?.trees.push(tree);
    }
  }

  /** How many times anything was read or recorded: a step that moved it depends on Secret data (route-memo.ts). */
  get touches(): number {
    return this.#touches;
  }

  /** A Secret's entries, decoded (`data` is base64; `stringData` wins, as the API server merges them); all recorded. */
  entries(secret: KubeObject): Record<string, string> {
    this.#touches++;
    const encoded = stringRecord(secret.data);
    const fromData = Object.fromEntries(Object.entries(encoded).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    const entries = { ...fromData, ...stringRecord(secret.stringData) };
    for (const [key, value] of Object.entries(entries)) {
      if (isPublicCertificate(value)) continue;
      this.record(value);
      if (encoded[key] !== undefined) this.record(encoded[key]);
      this.record(value.trim());
      for (const leaf of jsonLeaves(value)) this.#recordTextOnly(leaf);
    }
    return entries;
  }

  /** Records a string derived from Secret data and returns it, so derivations stay expressions. */
  record<T extends string>(value: T): T {
    this.#touches++;
    this.#log?.values.push(value);
    if (value !== '' && !isPublicCertificate(value)) {
      this.#values.add(value);
      this.#matcher = undefined;
      this.#textMatcher = undefined;
    }
    return value;
  }

  #recordTextOnly(value: string): void {
    this.#log?.textOnly.push(value);
    // Short fields of a JSON key ("type": "service_account") are not secret and too common.
    if (value.length < MIN_CONTAINED_LENGTH || isPublicCertificate(value)) return;
    this.#textOnly.add(value);
    this.#textMatcher = undefined;
  }

  /**
   * Records a JSON value parsed from Secret data: the whole subtree is Secret data wherever it
   * lands. Returns the object to put in the IR — use it, not `value`: an object or array is
   * interned by content (`internTree`), so a translation that parses the same JSON again records
   * the very object that route results kept from an earlier translation still hold. locate()
   * finds trees by identity; without this, a kept route (ApplyMemo, the incremental translator's
   * equal-content reuse) would hold a tree this translation's ledger never saw, and /config_dump
   * would show its keys, numbers and booleans.
   */
  recordTree<T>(value: T): T {
    const tree = value !== null && typeof value === 'object' ? internTree(value) : value;
    this.#recordSubtree(tree);
    return tree;
  }

  #recordSubtree(value: unknown): void {
    this.#touches++;
    if (typeof value === 'string') {
      this.record(value);
    } else if (value !== null && typeof value === 'object') {
      this.#trees.add(value);
      this.#log?.trees.push(value);
      for (const child of Object.values(value)) this.#recordSubtree(child);
    }
  }

  /** Every recorded string, including fields of JSON values (for scrubbing text such as log lines). */
  values(): string[] {
    return [...new Set([...this.#values, ...this.#textOnly])].sort();
  }

  /**
   * JSON Pointers (RFC 6901) of every location under `root` that holds Secret data: a recorded
   * subtree, a string equal to a recorded value, or a string containing one. Sorted.
   */
  locate(root: unknown, kept?: KeptRecord): string[] {
    const matcher = this.#matcherNow();
    const record = kept?.pointers;
    // Whatever happens below, the kept pointers count only if this call refreshes them.
    const held = record?.signature;
    if (record) record.signature = undefined;
    if (matcher.size === 0 && this.#trees.size === 0) return [];
    // Kept per Route/Backend object (depth 2: /routes/<key>) while the recorded values are the
    // same; not with recorded trees, which are found by identity in this translation only.
    const signature = this.#trees.size === 0 ? locateSignatures.of(this.#values) : undefined;
    const out: string[] = [];
    const entryPointers = (child: object): readonly string[] => {
      const found = located.get(child);
      if (found !== undefined && found.signature === signature) return found.pointers;
      const relative: string[] = [];
      for (const [k, grandchild] of Object.entries(child)) walk(grandchild, `/${escapePointer(k)}`, 3, relative);
      located.set(child, { signature: signature as number, pointers: relative });
      return relative;
    };
    const walk = (value: unknown, pointer: string, depth: number, into: string[]): void => {
      if (typeof value === 'string') {
        if (matcher.isSecret(value)) into.push(pointer);
      } else if (value !== null && typeof value === 'object') {
        if (this.#trees.has(value)) {
          into.push(pointer);
          return;
        }
        if (depth === 1 && signature !== undefined && record !== undefined && kept !== undefined && pointer === `/${escapePointer(kept.key)}`) {
          // The kept record's pointers per entry key: after an edit only the entries it changed are looked at.
          if (held !== signature || kept.changed === undefined) {
            record.byKey.clear();
            for (const key of Object.keys(value)) updateKey(key, value as Record<string, unknown>);
          } else {
            for (const key of kept.changed.removed) record.byKey.delete(key);
            for (const key in kept.changed.set) updateKey(key, value as Record<string, unknown>);
          }
          record.signature = signature;
          for (const [key, relative] of record.byKey) {
            const at = `${pointer}/${escapePointer(key)}`;
            for (const r of relative) into.push(at + r);
          }
          return;
        }
        if (depth === 1 && signature !== undefined) {
          // A record of Routes/Backends (10k entries): a kept entry in which nothing was found
          // costs a lookup, not a pointer string per key per translation.
          for (const key of Object.keys(value)) {
            const child = (value as Record<string, unknown>)[key];
            if (child === null || typeof child !== 'object' || this.#trees.has(child)) {
              walk(child, `${pointer}/${escapePointer(key)}`, depth + 1, into);
              continue;
            }
            const pointers = entryPointers(child);
            if (pointers.length === 0) continue;
            const at = `${pointer}/${escapePointer(key)}`;
            for (const relative of pointers) into.push(at + relative);
          }
          return;
        }
        for (const [key, child] of Object.entries(value)) walk(child, `${pointer}/${escapePointer(key)}`, depth + 1, into);
      }
    };
    /** One entry of the kept record into its pointer map: relative pointers, each as the full walk finds them. */
    const updateKey = (key: string, value: Record<string, unknown>): void => {
      const child = value[key];
      let relative: readonly string[];
      if (child === null || typeof child !== 'object' || this.#trees.has(child)) {
        const found: string[] = [];
        walk(child, '', 2, found);
        relative = found;
      } else {
        relative = entryPointers(child);
      }
      if (relative.length === 0) (record as RecordPointers).byKey.delete(key);
      else (record as RecordPointers).byKey.set(key, relative);
    };
    walk(root, '', 0, out);
    return out.sort();
  }

  /**
   * Statuses with every recorded value in a condition message replaced by `[redacted]`. A status
   * with nothing to scrub is returned as it is, and one given again (the same object, as an
   * incremental translation keeps unchanged ones) with the same recorded values gets its previous
   * result: its identity is what the thread boundary and the status writers compare.
   */
  scrubStatuses(statuses: readonly ObjectStatus[], kept?: ScrubbedList): ObjectStatus[] {
    const matcher = (this.#textMatcher ??= new SecretMatcher([...this.#values, ...this.#textOnly]));
    if (matcher.size === 0) {
      if (kept) kept.last = undefined;
      return [...statuses];
    }
    const signature = scrubSignatures.of(new Set([...this.#values, ...this.#textOnly]));
    const one = (status: ObjectStatus): ObjectStatus => {
      const found = scrubbed.get(status);
      if (found?.signature === signature) return found.status;
      const out = scrubStrings(status, matcher) as ObjectStatus;
      scrubbed.set(status, { signature, status: out });
      return out;
    };
    const last = kept?.last;
    let out: ObjectStatus[];
    if (last !== undefined && last.signature === signature && last.input.length === statuses.length) {
      // The previous list's results where the same status is at the same place: only the others are looked up.
      out = last.output.slice();
      for (let i = 0; i < statuses.length; i++) if (statuses[i] !== last.input[i]) out[i] = one(statuses[i] as ObjectStatus);
    } else {
      out = statuses.map(one);
    }
    if (kept) kept.last = { signature, input: statuses, output: out.slice() };
    return out;
  }

  #matcherNow(): SecretMatcher {
    return (this.#matcher ??= new SecretMatcher(this.#values));
  }
}

/** Object keys escaped for a JSON Pointer: `~` → `~0`, `/` → `~1`. */
export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]*-----END CERTIFICATE-----/g;

/** Only PEM certificates (and whitespace): public by design. */
export function isPublicCertificate(text: string): boolean {
  if (!text.includes('-----BEGIN CERTIFICATE-----')) return false;
  return text.replace(CERTIFICATE_BLOCK, '').trim() === '';
}

/** String leaves of a JSON object or array value (a service-account key's private_key …); none when the value is not JSON. */
function jsonLeaves(text: string): string[] {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (v !== null && typeof v === 'object') for (const child of Object.values(v)) walk(child);
  };
  walk(parsed);
  return out;
}

/** `value` with secrets scrubbed from its strings; the same object (or array) where nothing changed. */
function scrubStrings(value: unknown, matcher: SecretMatcher): unknown {
  if (typeof value === 'string') return matcher.scrub(value);
  if (Array.isArray(value)) {
    const out = value.map((v) => scrubStrings(v, matcher));
    return out.every((v, i) => v === value[i]) ? value : out;
  }
  if (isDict(value)) {
    const entries = Object.entries(value);
    const out = entries.map(([k, v]) => [k, scrubStrings(v, matcher)] as const);
    return out.every(([, v], i) => v === entries[i]?.[1]) ? value : Object.fromEntries(out);
  }
  return value;
}

/**
 * One live object per Secret-derived JSON content (canonical: keys sorted, as the incremental
 * translator's digests compare IR entries), process-wide. A tree is found again while anything
 * holds it — a kept IR route, a memoized policy read — and its entry goes when it is collected,
 * so the table never holds more than the trees alive anyway (each at most a Secret's size, which
 * the API server bounds). Trees are never changed after they are recorded.
 */
const internedTrees = new Map<string, WeakRef<object>>();
const forgetTree = new FinalizationRegistry<string>((key) => {
  if (internedTrees.get(key)?.deref() === undefined) internedTrees.delete(key);
});

function internTree<T extends object>(tree: T): T {
  const key = canonicalJson(tree);
  const live = internedTrees.get(key)?.deref();
  if (live !== undefined) return live as T;
  internedTrees.set(key, new WeakRef(tree));
  forgetTree.register(tree, key);
  return tree;
}

/** What scrubStatuses() and locate() found for objects given again, valid for one set of recorded values. */
const scrubbed = new WeakMap<object, { readonly signature: number; readonly status: ObjectStatus }>();
const located = new WeakMap<object, { readonly signature: number; readonly pointers: readonly string[] }>();

/**
 * Numbers for sets of recorded values: the same set as last time keeps its number, so a kept
 * result is checked in constant time however many keys there are. One per use (locate() reads
 * the values, scrubStatuses() the values and their JSON fields), so the two do not take turns.
 */
class Signatures {
  #last = '';
  #number = 0;

  of(values: ReadonlySet<string>): number {
    // JSON of the sorted values: no value can run into the next.
    const text = JSON.stringify([...values].sort());
    if (text !== this.#last) {
      this.#last = text;
      this.#number++;
    }
    return this.#number;
  }
}

const locateSignatures = new Signatures();
const scrubSignatures = new Signatures();
