import type { Logger } from '../../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../types.ts';
import { missingPaths } from './discover.ts';
import { FileSet, type ScanResult } from './file-set.ts';
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from './limits.ts';
import { ParserThread } from './parser-thread.ts';
import { ScanReporter } from './report.ts';
import { ConfigWatch, type Touched } from './watch.ts';

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

/**
 * Objects from YAML files, watched for changes. Every change is debounced, the files the events
 * name (all of them when an event could mean any) are re-read and, when anything changed, the
 * complete snapshot is handed to the subscriber (watch.ts). Reading and parsing happen in a worker
 * thread (ParserThread), never on this thread's event loop; scans run one at a time.
 */
export class FileSource implements ObjectSource {
  readonly #options: FileSourceOptions;
  readonly #files: FileSet;
  readonly #parser: ParserThread;
  readonly #watch: ConfigWatch;
  readonly #reporter: ScanReporter;
  #onSnapshot: ((snapshot: SourceSnapshot) => void) | undefined;
  #stopped = false;

  constructor(options: FileSourceOptions) {
    this.#options = options;
    const limits = options.limits ?? DEFAULT_CONFIG_LIMITS;
    this.#files = new FileSet(options.paths, limits);
    this.#parser = new ParserThread({ limits, logger: options.logger, timeoutMs: options.parseTimeoutMs });
    this.#watch = new ConfigWatch(options, (touched) => this.#rescan(touched));
    this.#reporter = new ScanReporter(options.logger);
  }

  async start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void> {
    const missing = missingPaths(this.#options.paths);
    if (missing.length > 0) throw new Error(`configuration path not found: ${missing.join(', ')}`);
    this.#onSnapshot = onSnapshot;
    const result = await this.#watch.start((touched) => this.#scan(touched));
    this.#reporter.report(result);
    onSnapshot(result.snapshot);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // Watching stops at once; the scan under way (if any) ends when the parser answers it.
    const watching = this.#watch.stop();
    await this.#parser.close();
    await watching;
  }

  async #rescan(touched: Touched): Promise<void> {
    let result: ScanResult;
    try {
      result = await this.#scan(touched);
    } catch (err) {
      this.#options.logger.error({ err: (err as Error).message }, 'reading configuration files failed; keeping the current configuration');
      return;
    }
    if (this.#stopped) return;
    this.#reporter.report(result);
    if (result.changed) this.#onSnapshot?.(result.snapshot);
  }

  #scan(touched: Touched): Promise<ScanResult> {
    return this.#files.scan((file, previousHash) => this.#parser.read(file, previousHash), touched);
  }
}
