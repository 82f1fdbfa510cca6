import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../types.ts';
import { missingPaths } from './discover.ts';
import { FileSet, type ScanResult } from './file-set.ts';

export interface FileSourceOptions {
  /** Files and folders (searched recursively) of multi-document YAML. */
  readonly paths: readonly string[];
  readonly logger: Logger;
  /** Quiet time after the last file event before re-reading: an editor's save is several events. */
  readonly debounceMs?: number;
  /** Upper bound on how long a stream of events can postpone a re-read. */
  readonly maxWaitMs?: number;
}

const DEFAULT_DEBOUNCE_MS = 100;
const DEFAULT_MAX_WAIT_MS = 1000;

/**
 * Objects from YAML files, watched for changes. Every change is debounced, the files are re-read
 * and, when anything changed, the complete snapshot is handed to the subscriber.
 */
export class FileSource implements ObjectSource {
  readonly #options: FileSourceOptions;
  readonly #files: FileSet;
  readonly #watchers: fs.FSWatcher[] = [];
  /** Ignored kinds are logged once per kind, not on every reload. */
  readonly #loggedIgnoredKinds = new Set<string>();
  #onSnapshot: ((snapshot: SourceSnapshot) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #firstPendingEventAt = 0;
  #stopped = false;

  constructor(options: FileSourceOptions) {
    this.#options = options;
    this.#files = new FileSet(options.paths);
  }

  async start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void> {
    const missing = missingPaths(this.#options.paths);
    if (missing.length > 0) throw new Error(`configuration path not found: ${missing.join(', ')}`);
    this.#onSnapshot = onSnapshot;
    // Watch before the first read so an edit made while reading is not lost.
    for (const root of this.#options.paths) this.#watch(root);
    const result = this.#files.scan();
    this.#report(result);
    onSnapshot(result.snapshot);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.splice(0)) watcher.close();
  }

  #watch(root: string): void {
    const isFolder = fs.statSync(root).isDirectory();
    // A single file is watched through its folder: editors and ConfigMap updates replace files by
    // renaming, and a watch on the old inode would go quiet after the first save.
    const target = isFolder ? root : path.dirname(root);
    const onlyName = isFolder ? undefined : path.basename(root);
    const watcher = fs.watch(target, { recursive: isFolder, persistent: false }, (_event, filename) => {
      if (onlyName !== undefined && filename !== null && filename !== onlyName) return;
      this.#schedule();
    });
    watcher.on('error', (err) => this.#options.logger.warn({ path: root, err: err.message }, 'file watch failed; changes under this path may be missed'));
    this.#watchers.push(watcher);
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
    let result: ScanResult;
    try {
      result = this.#files.scan();
    } catch (err) {
      this.#options.logger.error({ err: (err as Error).message }, 'reading configuration files failed; keeping the current configuration');
      return;
    }
    this.#report(result);
    if (result.changed) this.#onSnapshot?.(result.snapshot);
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
