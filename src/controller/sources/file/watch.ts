import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../../common/logger.ts';
import { YamlFileListing } from './discover.ts';

export interface ConfigWatchOptions {
  /** Files and folders (searched recursively) of multi-document YAML. */
  readonly paths: readonly string[];
  readonly logger: Logger;
  /** Quiet time after the last file event before re-reading: an editor's save is several events. */
  readonly debounceMs?: number;
  /** Upper bound on how long a stream of events can postpone a re-read. */
  readonly maxWaitMs?: number;
}

/** Files named by the events since the last scan began, or `all` when an event could mean any file. */
export type Touched = ReadonlySet<string> | 'all';

/** Short: a route change has 100 ms to reach the proxies (issue 15); an editor's save is a burst of events well inside it. */
export const DEFAULT_DEBOUNCE_MS = 20;
const DEFAULT_MAX_WAIT_MS = 1000;
/** What discover.ts reads; an event for any other name may stand for a YAML file (a renamed folder, a swapped link). */
const YAML_FILE_NAME = /\.ya?ml$/i;

/**
 * Watches the folders of a set of configuration paths and calls `rescan` with the files the
 * events named, debounced, one scan at a time (a change seen during a scan schedules another after
 * it). Shared by FileSource (scans in this thread's FileSet) and the embedded config thread
 * (src/embedded/config-thread.ts: scans where the objects are held), so both follow the same rules.
 */
export class ConfigWatch {
  readonly #options: ConfigWatchOptions;
  readonly #rescan: (touched: Touched) => Promise<void>;
  /** The scan under way; a change seen meanwhile schedules another one after it. */
  #scanning: Promise<void> | undefined;
  /** By folder. */
  readonly #watchers = new Map<string, fs.FSWatcher>();
  #interest: ReadonlyMap<string, ReadonlySet<string> | 'all'> = new Map();
  /** The folders under the paths, listed again only when one changed (discover.ts): sync() runs after every scan. */
  readonly #listing: YamlFileListing;
  #timer: NodeJS.Timeout | undefined;
  /**
   * Files named by the events since the last scan began, or `all` when an event could mean any
   * file (no name, a name that is not a YAML file — a ConfigMap mount swaps its `..data` link —,
   * a watch error) and every file is hashed again.
   */
  #touched: Set<string> | 'all' = 'all';
  #firstPendingEventAt = 0;
  #stopped = false;

  constructor(options: ConfigWatchOptions, rescan: (touched: Touched) => Promise<void>) {
    this.#options = options;
    this.#rescan = rescan;
    this.#listing = new YamlFileListing(options.paths);
  }

  /**
   * Starts watching (before the first read, so an edit made while reading is not lost) and runs
   * `first` as the first scan with every file touched; resolves or rejects with it.
   */
  async start<T>(first: (touched: Touched) => Promise<T>): Promise<T> {
    this.sync();
    const result = first(this.#takeTouched());
    this.#scanning = result.then(() => {}, () => {}).finally(() => { this.#scanning = undefined; });
    return result;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
    await this.#scanning;
  }

  /** Marks every file as touched and schedules a scan (a scan that must look at everything again). */
  touchAll(): void {
    this.#touch('all');
    this.#schedule();
  }

  /** Watches every folder that matters now; called after each scan since folders come and go. */
  sync(): void {
    if (this.#stopped) return;
    const wanted = this.#listing.folders();
    // The same folders as the previous sync (the listing is kept while no folder changed), each
    // watched (a watch that failed to start is tried again): nothing to do.
    if (wanted === this.#interest && this.#watchers.size === wanted.size) return;
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

  /**
   * sync() after a scan. Listing the folders can fail (a folder unreadable, one given that went away
   * for a moment): that is logged and the whole tree looked at again shortly — thrown here it would
   * reject the scan promise others chain on, which nothing handles, and end the process.
   */
  #syncOrRetry(): void {
    try {
      this.sync();
    } catch (err) {
      this.#options.logger.warn({ err: (err as Error).message }, 'listing the configuration folders failed; looking again');
      this.#touch('all');
      this.#timer ??= setTimeout(() => this.#fire(), this.#options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
    }
  }

  #touch(file: string): void {
    if (this.#touched === 'all') return;
    if (file === 'all') this.#touched = 'all';
    else this.#touched.add(file);
  }

  /** Events from here on are for the next scan (this one may or may not see their change). */
  #takeTouched(): Touched {
    const touched = this.#touched;
    this.#touched = new Set();
    return touched;
  }

  #schedule(): void {
    if (this.#stopped) return;
    const now = Date.now();
    if (this.#timer === undefined) this.#firstPendingEventAt = now;
    clearTimeout(this.#timer);
    const debounceMs = this.#options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    const maxWaitMs = this.#options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    const delay = Math.max(0, Math.min(debounceMs, this.#firstPendingEventAt + maxWaitMs - now));
    this.#timer = setTimeout(() => this.#fire(), delay);
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    if (this.#scanning) {
      // A slow parse is under way: look again once it is done (the files may have changed since it began).
      void this.#scanning.then(() => this.#schedule());
      return;
    }
    this.#scanning = this.#rescan(this.#takeTouched()).catch(() => {}).finally(() => {
      this.#scanning = undefined;
      // Folders come and go with the files.
      this.#syncOrRetry();
    });
  }
}
