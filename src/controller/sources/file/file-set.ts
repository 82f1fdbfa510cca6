import path from 'node:path';
import type { SourcedObject } from '../../../api/gateway/object.ts';
import type { ConfigProblem, SourceSnapshot } from '../types.ts';
import { YamlFileListing } from './discover.ts';
import { DEFAULT_CONFIG_LIMITS, formatBytes, type ConfigLimits } from './limits.ts';
import type { ParsedFile } from './parsed-file.ts';
import type { FileRead } from './read.ts';
import { SharedStrings } from './shared-strings.ts';

/** Reads one file unless its content hash is `previousHash` (in this thread, or in the parser thread). */
export type FileReader = (file: string, previousHash: string | undefined) => FileRead | Promise<FileRead>;

interface FileEntry {
  readonly hash: string;
  readonly bytes: number;
  /** What the file's current version parsed to. */
  readonly parsed: ParsedFile;
  /** The objects of the last version that was taken: served while the file is broken or over a limit. */
  readonly lastGood: readonly SourcedObject[];
}

export interface ScanResult {
  /** false when no file was added, removed or changed since the previous scan. */
  readonly changed: boolean;
  readonly snapshot: SourceSnapshot;
  /** Problems of files (re)read in this scan only: what is new to log. */
  readonly newProblems: readonly ConfigProblem[];
  /** `group/Kind` of ignored objects in files (re)read in this scan. */
  readonly ignoredKinds: ReadonlySet<string>;
  /** Files found broken in this scan → how many objects of their last good version they still contribute. */
  readonly keptFromBrokenFiles: ReadonlyMap<string, number>;
}

/**
 * The YAML files under a set of paths and what each contributes, re-read on demand. A file whose
 * YAML breaks, or that goes over a limit, keeps contributing the objects of its last good
 * version, so a typo (or a hostile file) never empties the gateway; a file that disappears takes
 * its objects with it.
 */
export class FileSet {
  /** The files under the paths, listed again only when a folder changed (discover.ts). */
  readonly #listing: YamlFileListing;
  readonly #limits: ConfigLimits;
  readonly #entries = new Map<string, FileEntry>();
  /** Files refused last scan because the files before them already used up `maxTotalBytes`. */
  #overTotal = new Set<string>();

  /** Reads and parses in this thread; the parser's modules load at the first such read (a thread whose reads go to a ParserThread never loads them). */
  readonly #readHere: FileReader = async (file, previousHash) => (await import('./read.ts')).readConfigFile(file, previousHash, this.#limits);

  constructor(paths: readonly string[], limits: ConfigLimits = DEFAULT_CONFIG_LIMITS) {
    this.#listing = new YamlFileListing(paths);
    this.#limits = limits;
  }

  /**
   * Re-reads what changed; `read` defaults to reading and parsing in this thread. `touched`, when
   * not `all`, names (as absolute paths) the only files that may have changed since the previous
   * scan (from the watcher's events): a file already known and not named is taken as it was, without reading or
   * hashing it again. New files are read whatever `touched` says; gone ones are dropped.
   */
  async scan(read: FileReader = this.#readHere, touched: ReadonlySet<string> | 'all' = 'all'): Promise<ScanResult> {
    const files = this.#listing.files(touched);
    let changed = false;
    const readNow = new Set<string>();
    const seen: string[] = [];
    const strings = new SharedStrings();

    // Every read is asked for before the first is awaited: a reader in another thread (ParserThread)
    // works through them without a round trip between files. Results are taken in discovery order.
    const reads = files.map((file) => {
      const previous = this.#entries.get(file);
      if (previous && touched !== 'all' && !touched.has(path.resolve(file))) return undefined;
      const reading = Promise.resolve(read(file, previous?.hash));
      // A failed read fails the scan when its turn comes; one after it is not left unhandled.
      reading.catch(() => {});
      return reading;
    });
    for (const [i, file] of files.entries()) {
      const previous = this.#entries.get(file);
      const reading = reads[i];
      if (reading === undefined) {
        seen.push(file);
        continue;
      }
      const result = await reading;
      if (result.kind === 'gone') continue;
      seen.push(file);
      if (result.kind === 'unchanged') continue;
      changed = true;
      readNow.add(file);
      shareFileName(result.parsed, file);
      for (const { object } of result.parsed.objects) strings.share(object);
      const parsed = previous ? keepUnchangedObjects(result.parsed, previous.lastGood) : result.parsed;
      this.#entries.set(file, { hash: result.hash, bytes: result.bytes, parsed, lastGood: previous?.lastGood ?? [] });
    }
    const seenSet = new Set(seen);
    for (const file of [...this.#entries.keys()]) {
      if (seenSet.has(file)) continue;
      this.#entries.delete(file);
      changed = true;
    }

    // Files are taken in discovery order until together they pass the limit; the rest are refused.
    const overTotal = new Set<string>();
    let total = 0;
    for (const file of seen) {
      total += (this.#entries.get(file) as FileEntry).bytes;
      if (total > this.#limits.maxTotalBytes) overTotal.add(file);
    }
    const totalProblem = (file: string): ConfigProblem => ({ severity: 'error', file, message: `over a configuration limit: the configuration files together hold more than ${formatBytes(this.#limits.maxTotalBytes)}; this file and the ones after it are not read` });
    const newlyOver = [...overTotal].filter((f) => !this.#overTotal.has(f) || readNow.has(f));
    if (newlyOver.length > 0 || [...this.#overTotal].some((f) => !overTotal.has(f))) changed = true;
    this.#overTotal = overTotal;

    const newProblems: ConfigProblem[] = [];
    const ignoredKinds = new Set<string>();
    const keptFromBrokenFiles = new Map<string, number>();
    const objects: SourcedObject[] = [];
    const problems: ConfigProblem[] = [];
    for (const file of seen) {
      const entry = this.#entries.get(file) as FileEntry;
      const taken = entry.parsed.syntaxOk && !overTotal.has(file);
      const fileProblems = overTotal.has(file) ? [totalProblem(file)] : entry.parsed.problems;
      if (taken && entry.lastGood !== entry.parsed.objects) this.#entries.set(file, { ...entry, lastGood: entry.parsed.objects });
      const contributes = taken ? entry.parsed.objects : entry.lastGood;
      objects.push(...contributes);
      problems.push(...fileProblems);
      if (readNow.has(file) || newlyOver.includes(file)) {
        newProblems.push(...fileProblems);
        for (const kind of entry.parsed.ignoredKinds) ignoredKinds.add(kind);
        if (!taken) keptFromBrokenFiles.set(file, contributes.length);
      }
    }
    return { changed, snapshot: { objects, problems }, newProblems, ignoredKinds, keptFromBrokenFiles };
  }
}

/**
 * Each object's origin names its file with the one string `file`: a parse in the parser thread
 * arrives by structured clone, which copies the name once per object (~80 bytes each, kept for
 * as long as the object). The parsed file is this scan's own, fresh from the reader.
 */
function shareFileName(parsed: ParsedFile, file: string): void {
  for (const { origin } of parsed.objects) if (origin !== undefined && origin.file === file) origin.file = file;
}

/**
 * A re-read file's objects, each one equal to an object of the file's previous version replaced
 * by that previous object (with its new origin): the translator compares objects by identity
 * (src/controller/translate/incremental.ts), so one edited route in a file of a hundred is one
 * changed object, not a hundred.
 */
function keepUnchangedObjects(parsed: ParsedFile, previous: readonly SourcedObject[]): ParsedFile {
  if (previous.length === 0 || parsed.objects.length === 0) return parsed;
  // An edit keeps the other objects at their places: each is first compared with the previous
  // object at its place (a walk of both, no JSON); only the ones that differ there are looked up
  // by their JSON among the previous version's (an object moved, or one edited).
  let byJson: Map<string, SourcedObject['object']> | undefined;
  let reused = false;
  const objects = parsed.objects.map((sourced, i) => {
    const atPlace = previous[i]?.object;
    let before = atPlace !== undefined && sameData(atPlace, sourced.object) ? atPlace : undefined;
    if (before === undefined) {
      byJson ??= jsonIndex(previous);
      const json = jsonOf(sourced.object);
      before = json === undefined ? undefined : byJson.get(json);
    }
    if (before === undefined) return sourced;
    reused = true;
    return { ...sourced, object: before };
  });
  return reused ? { ...parsed, objects } : parsed;
}

function jsonIndex(objects: readonly SourcedObject[]): Map<string, SourcedObject['object']> {
  const byJson = new Map<string, SourcedObject['object']>();
  for (const { object } of objects) {
    const json = jsonOf(object);
    if (json !== undefined) byJson.set(json, object);
  }
  return byJson;
}

/**
 * Whether two parsed values are the same data: what JSON.stringify would write the same, for the
 * plain values a YAML parse gives (objects with the same keys in the same order, arrays, strings,
 * finite numbers, booleans, null). Anything else — a key order that differs, a non-finite number,
 * undefined — answers false, and the caller falls back to comparing JSON.
 */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || Number.isFinite(a);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  // A Date or any other class instance: JSON of it is its own (toJSON), not its keys.
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  for (let i = 0; i < keysA.length; i++) {
    const key = keysA[i] as string;
    if (key !== keysB[i] || !sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** undefined for a value JSON cannot hold (then the object simply counts as changed). */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
