import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../types.ts';
import { foldersToWatch, missingPaths } from './discover.ts';
import { FileSet, type ScanResult } from './file-set.ts';
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from './limits.ts';
import { ParserThread } from './parser-thread.ts';

export interface FileSourceOptions {
  /** Files and folders (searched recursively) of multi-document YAML. */
  readonly paths: readonly string[];
  readonly logger: Logger;
  /** Quiet time after the last file event before re-reading: an editor's save is several events. */
  readonly debounceMs?: number;
  /** Upper bound on how long a stream of events can postpone a re-read. */
  readonly maxWaitMs?: number;
  /** Bounds on file size, documents, aliases, nodes, depth and all files together. */
  readonly limits?: ConfigLimits;
  /** A file whose parse takes longer is reported as broken (see ParserThread). */
  readonly parseTimeoutMs?: number;
}

/** Short: a route change has 100 ms to reach the proxies (issue 15); an editor's save is a burst of events well inside it. */
const DEFAULT_DEBOUNCE_MS = 20;
const DEFAULT_MAX_WAIT_MS = 1000;
/** What discover.ts reads; an event for any other name may stand for a YAML file (a renamed folder, a swapped link). */
const YAML_FILE_NAME = /\.ya?ml$/i;

/**
 * Objects from YAML files, watched for changes. Every change is debounced, the files the events
 * name (all of them when an event could mean any) are re-read and, when anything changed, the
 * complete snapshot is handed to the subscriber. Reading and
 * parsing happen in a worker thread (ParserThread), never on this thread's event loop; scans run
 * one at a time.
 */
export class FileSource implements ObjectSource {
  readonly #options: FileSourceOptions;
  readonly #files: FileSet;
  readonly #parser: ParserThread;
  /** The scan under way; a change seen meanwhile schedules another one after it. */
  #scanning: Promise<void> | undefined;
  /** By folder. */
  readonly #watchers = new Map<string, fs.FSWatcher>();
  #interest = new Map<string, Set<string> | 'all'>();
  /** Ignored kinds are logged once per kind, not on every reload. */
  readonly #loggedIgnoredKinds = new Set<string>();
  #onSnapshot: ((snapshot: SourceSnapshot) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  /**
   * Files named by the events since the last scan began, or `all` when an event could mean any
   * file (no name, a name that is not a YAML file — a ConfigMap mount swaps its `..data` link —,
   * a watch error) and every file is hashed again.
   */
  #touched: Set<string> | 'all' = 'all';
  #firstPendingEventAt = 0;
  #stopped = false;

  constructor(options: FileSourceOptions) {
    this.#options = options;
    const limits = options.limits ?? DEFAULT_CONFIG_LIMITS;
    this.#files = new FileSet(options.paths, limits);
    this.#parser = new ParserThread({ limits, logger: options.logger, timeoutMs: options.parseTimeoutMs });
  }

  async start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void> {
    const missing = missingPaths(this.#options.paths);
    if (missing.length > 0) throw new Error(`configuration path not found: ${missing.join(', ')}`);
    this.#onSnapshot = onSnapshot;
    // Watch before the first read so an edit made while reading is not lost.
    this.#syncWatchers();
    const first = this.#scan();
    this.#scanning = first.then(() => {}, () => {}).finally(() => { this.#scanning = undefined; });
    const result = await first;
    this.#report(result);
    onSnapshot(result.snapshot);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
    await this.#parser.close();
    await this.#scanning;
  }

  /** Watches every folder that matters now; called after each scan since folders come and go. */
  #syncWatchers(): void {
    if (this.#stopped) return;
    const wanted = foldersToWatch(this.#options.paths);
    for (const [folder, watcher] of this.#watchers) {
      if (wanted.has(folder)) continue;
      watcher.close();
      this.#watchers.delete(folder);
    }
    this.#interest = wanted;
    for (const folder of wanted.keys()) {
      if (this.#watchers.has(folder)) continue;
      try {
        const watcher = fs.watch(folder, { persistent: false }, (_event, filename) => {
          const names = this.#interest.get(folder);
          if (names !== undefined && names !== 'all' && filename !== null && !names.has(filename)) return;
          this.#touch(filename === null || !YAML_FILE_NAME.test(filename) ? 'all' : path.resolve(folder, filename));
          this.#schedule();
        });
        watcher.on('error', () => {
          // The folder went away; the rescan this triggers drops its watch.
          this.#touch('all');
          this.#schedule();
        });
        this.#watchers.set(folder, watcher);
      } catch (err) {
        this.#options.logger.warn({ path: folder, err: (err as Error).message }, 'cannot watch folder; changes under it may be missed');
      }
    }
  }

  #touch(file: string): void {
    if (this.#touched === 'all') return;
    if (file === 'all') this.#touched = 'all';
    else this.#touched.add(file);
  }

  #schedule(): void {
    if (this.#stopped) return;
    const now = Date.now();
    if (this.#timer === undefined) this.#firstPendingEventAt = now;
    clearTimeout(this.#timer);
    const debounceMs = this.#options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    const maxWaitMs = this.#options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    const delay = Math.max(0, Math.min(debounceMs, this.#firstPendingEventAt + maxWaitMs - now));
    this.#timer = setTimeout(() => this.#rescan(), delay);
  }

  #rescan(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    if (this.#scanning) {
      // A slow parse is under way: look again once it is done (the files may have changed since it began).
      void this.#scanning.then(() => this.#schedule());
      return;
    }
    this.#scanning = this.#rescanNow().finally(() => { this.#scanning = undefined; });
  }

  async #rescanNow(): Promise<void> {
    let result: ScanResult;
    try {
      result = await this.#scan();
    } catch (err) {
      this.#options.logger.error({ err: (err as Error).message }, 'reading configuration files failed; keeping the current configuration');
      return;
    }
    if (this.#stopped) return;
    this.#report(result);
    this.#syncWatchers();
    if (result.changed) this.#onSnapshot?.(result.snapshot);
  }

  #scan(): Promise<ScanResult> {
    // Events from here on are for the next scan (this one may or may not see their change).
    const touched = this.#touched;
    this.#touched = new Set();
    return this.#files.scan((file, previousHash) => this.#parser.read(file, previousHash), touched);
  }

  #report(result: ScanResult): void {
    const logger = this.#options.logger;
    for (const problem of result.newProblems) {
      logger.error({ file: problem.file, document: problem.document, line: problem.line, column: problem.column, path: problem.path }, problem.message);
    }
    for (const [file, keptObjects] of result.keptFromBrokenFiles) {
      logger.warn({ file, keptObjects }, 'configuration file is broken; keeping the objects of its last good version');
    }
    for (const kind of result.ignoredKinds) {
      if (this.#loggedIgnoredKinds.has(kind)) continue;
      this.#loggedIgnoredKinds.add(kind);
      logger.info({ kind }, 'ignoring objects of a kind the gateway does not read');
    }
  }
}
