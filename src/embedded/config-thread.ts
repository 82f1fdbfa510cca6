import type { HeapInfo } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import type { ObjectStatus } from '../api/gateway/object.ts';
import type { Logger } from '../common/logger.ts';
import { missingPaths } from '../controller/sources/file/discover.ts';
import { DEFAULT_CONFIG_LIMITS, type ConfigLimits } from '../controller/sources/file/limits.ts';
import { ConfigWatch, type Touched } from '../controller/sources/file/watch.ts';
import type { ConfigProblem } from '../controller/sources/types.ts';
import type { ProxyConfig } from '../ir/types.ts';
import type { ConfigFeed, FedTranslation } from './gateway.ts';
import { applyUpdate, DEFAULT_TRANSLATE_TIMEOUT_MS, DEFAULT_TRANSLATOR_HEAP_MIB, TranslationAbortedError, type TranslationUpdate } from './translator-thread.ts';
import { workerEntry } from '../common/entry-points.ts';

/** What the thread is started with (workerData). */
export interface ConfigThreadInit {
  readonly paths: readonly string[];
  readonly limits: ConfigLimits;
  readonly parseTimeoutMs?: number;
  readonly parserHeapMiB?: number;
  readonly options: { controllerName?: string; proxyModels?: boolean };
  readonly logLevel: string;
  /** The level of the gateway's logger: the status writer's lines ('status changed'). */
  readonly gatewayLogLevel: string;
}

export type ConfigThreadRequest =
  /** Scan the files `touched` names (absolute paths), or all of them; translate when anything changed. */
  | { readonly type: 'scan'; readonly id: number; readonly touched: readonly string[] | 'all' }
  /** The statuses as the thread's status writer last wrote them. */
  | { readonly type: 'statuses'; readonly id: number };

export type ConfigThreadReply =
  | { readonly type: 'ready' }
  /** A pino JSON line from one of the thread's loggers, logged again here through the same one. */
  | { readonly type: 'log'; readonly logger: 'source' | 'gateway'; readonly line: string }
  | { readonly type: 'statuses'; readonly id: number; readonly statuses: readonly ObjectStatus[] }
  /** The scan found changes; translation starts (its time limit runs from here). */
  | { readonly id: number; readonly type: 'translating' }
  | { readonly id: number; readonly type: 'unchanged' }
  | { readonly id: number; readonly type: 'scan-failed'; readonly message: string }
  | { readonly id: number; readonly type: 'updated'; readonly result: TranslationUpdate; readonly problems: readonly ConfigProblem[]; readonly sourceErrors: number }
  | { readonly id: number; readonly type: 'failed'; readonly message: string };

export interface ConfigThreadOptions {
  /** Files and folders (searched recursively) of multi-document YAML. */
  readonly paths: readonly string[];
  /** The source's logger: the thread's lines (file errors, duplicates) are logged through it. */
  readonly logger: Logger;
  /** The gateway's logger: the thread's own failures. */
  readonly gatewayLogger?: Logger;
  readonly translateOptions?: { controllerName?: string; proxyModels?: boolean };
  readonly debounceMs?: number;
  readonly maxWaitMs?: number;
  readonly limits?: ConfigLimits;
  /** A file whose parse takes longer is reported as broken (the nested ParserThread's limit). */
  readonly parseTimeoutMs?: number;
  readonly parserHeapMiB?: number;
  /** A translation that takes longer is given up on (the thread is restarted); the last good config keeps serving. */
  readonly timeoutMs?: number;
  /** The thread's V8 heap (objects, IR, the translator's memos); a translation that needs more ends the thread, not the gateway. */
  readonly maxHeapMiB?: number;
  /** The module the thread runs; tests swap in a misbehaving one. */
  readonly workerModule?: URL;
}

/**
 * V8's default young generation (up to 48 MiB here) is sized for throughput; this thread's
 * garbage is a translation's temporaries. 16 MiB measured the same translation CPU (first
 * translation and per-edit, 10k routes, in process: `--max-semi-space-size=5` vs default, three
 * interleaved rounds) and 100–130 MiB less RSS for the gateway at 10k routes (bench/RESULTS.md, session 7).
 */
const CONFIG_THREAD_YOUNG_GENERATION_MIB = 16;

interface Pending {
  /** The first scan: its failure to read the files fails start(), as FileSource's does. */
  readonly first: boolean;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  failure?: Error;
  timer?: NodeJS.Timeout;
}

interface Thread {
  readonly worker: Worker;
  /** The config of the thread's last answer: its next answer names the changes from it. */
  config: ProxyConfig | undefined;
  /** Whether the thread was asked for its first scan (which must look at every file). */
  scanned: boolean;
}

/**
 * The embedded gateway's source and translator in one worker thread (issue 15): the objects live
 * there once — not in a parser thread, the serving thread and a translator thread as before — and
 * the serving thread receives only the IR's changes (the status writer lives there too). The folders are watched
 * here (ConfigWatch, the same rules as FileSource), so a translation that was given up on is not
 * tried again until a file changes. Parsing keeps every bound it had: files are read and parsed
 * in the nested ParserThread (size, alias, node and depth limits, its time and heap limits and
 * restart); the config thread itself has the translator thread's time and heap limits.
 */
export class ConfigThread implements ConfigFeed {
  readonly #options: ConfigThreadOptions;
  readonly #watch: ConfigWatch;
  #thread: Thread | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #deliver: ((result: FedTranslation | Error) => void) | undefined;
  #firstScan = true;
  readonly #statusWaiters = new Map<number, { resolve: (statuses: readonly ObjectStatus[]) => void; reject: (err: Error) => void }>();
  #stopped = false;
  /** The first scan, from begin(). */
  #first: Promise<void> | undefined;
  /** Results the thread delivered before start() gave a taker (begin() came first), in order. */
  readonly #early: (FedTranslation | Error)[] = [];

  constructor(options: ConfigThreadOptions) {
    this.#options = options;
    this.#watch = new ConfigWatch(options, (touched) => this.#scan(touched));
  }

  /**
   * Starts watching and the first scan now, before the gateway that takes the results exists: the
   * CLI calls it first thing, so the thread reads, parses and translates while the serving thread
   * is still loading the proxy's modules (issue 15: time to ready). What the thread answers before
   * start() is kept for it; a failure of the first scan is start()'s to report.
   */
  begin(): void {
    if (this.#first) return;
    const missing = missingPaths(this.#options.paths);
    this.#first = missing.length > 0
      ? Promise.reject(new Error(`configuration path not found: ${missing.join(', ')}`))
      : this.#watch.start((touched) => this.#scan(touched));
    // Reported by start(), which may come later: not an unhandled rejection meanwhile.
    this.#first.catch(() => {});
  }

  async start(deliver: (result: FedTranslation | Error) => void): Promise<void> {
    this.begin();
    this.#deliver = deliver;
    for (const early of this.#early.splice(0)) deliver(early);
    await this.#first;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const watching = this.#watch.stop();
    const thread = this.#thread;
    this.#thread = undefined;
    this.#answerAll();
    await thread?.worker.terminate();
    await watching;
  }

  /**
   * The statuses as the thread's status writer wrote them (it owns lastTransitionTime): asked for
   * when the admin endpoint shows them, so the serving thread never holds or clones 11k statuses per change.
   */
  statuses(): Promise<readonly ObjectStatus[]> {
    const thread = this.#thread;
    if (!thread || this.#stopped) return Promise.resolve([]);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#statusWaiters.set(id, { resolve, reject });
      thread.worker.postMessage({ type: 'statuses', id } satisfies ConfigThreadRequest);
    });
  }

  /** The thread's V8 heap, or undefined when no thread runs (diagnostics; tests of its idle GC). */
  heapStatistics(): Promise<HeapInfo | undefined> {
    const thread = this.#thread;
    return thread && !this.#stopped ? thread.worker.getHeapStatistics() : Promise.resolve(undefined);
  }

  /** Resolves when the thread has answered (or was given up on); rejects only for the first scan, which start() reports. */
  #scan(touched: Touched): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    const thread = this.#ensureThread();
    const id = this.#nextId++;
    const first = this.#firstScan;
    this.#firstScan = false;
    return new Promise<void>((resolve, reject) => {
      this.#pending.set(id, { first, resolve, reject });
      // A new thread holds nothing yet: it reads every file.
      const all = touched === 'all' || !thread.scanned;
      thread.scanned = true;
      thread.worker.postMessage({ type: 'scan', id, touched: all ? 'all' : [...touched] } satisfies ConfigThreadRequest);
    });
  }

  #ensureThread(): Thread {
    if (this.#thread) return this.#thread;
    const init: ConfigThreadInit = {
      paths: this.#options.paths,
      limits: this.#options.limits ?? DEFAULT_CONFIG_LIMITS,
      ...(this.#options.parseTimeoutMs !== undefined ? { parseTimeoutMs: this.#options.parseTimeoutMs } : {}),
      ...(this.#options.parserHeapMiB !== undefined ? { parserHeapMiB: this.#options.parserHeapMiB } : {}),
      options: this.#options.translateOptions ?? {},
      logLevel: this.#options.logger.level,
      gatewayLogLevel: (this.#options.gatewayLogger ?? this.#options.logger).level,
    };
    const maxHeapMiB = this.#options.maxHeapMiB ?? DEFAULT_TRANSLATOR_HEAP_MIB;
    const worker = new Worker(this.#options.workerModule ?? workerEntry(new URL('./config-thread-worker.ts', import.meta.url)), {
      workerData: init,
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMiB, maxYoungGenerationSizeMb: CONFIG_THREAD_YOUNG_GENERATION_MIB },
    });
    // The thread must never keep the process alive on its own.
    worker.unref();
    const thread: Thread = { worker, config: undefined, scanned: false };
    worker.on('message', (reply: ConfigThreadReply) => this.#onReply(thread, reply));
    worker.on('error', (err: Error & { code?: string }) => {
      const reason = err.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `over a configuration limit: translation needed more than the translator thread's ${maxHeapMiB} MiB of memory`
        : `the translator thread failed: ${err.message}`;
      (this.#options.gatewayLogger ?? this.#options.logger).error({ err: err.message }, 'configuration translator thread failed; restarting it');
      this.#giveUp(thread, reason);
    });
    worker.on('exit', () => this.#giveUp(thread, 'the translator thread exited'));
    this.#thread = thread;
    return thread;
  }

  #onReply(thread: Thread, reply: ConfigThreadReply): void {
    if (reply.type === 'ready') return;
    if (reply.type === 'log') {
      this.#relog(reply.logger === 'gateway' ? (this.#options.gatewayLogger ?? this.#options.logger) : this.#options.logger, reply.line);
      return;
    }
    if (reply.type === 'statuses') {
      this.#statusWaiters.get(reply.id)?.resolve(reply.statuses);
      this.#statusWaiters.delete(reply.id);
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (reply.type === 'translating') {
      if (!pending || this.#thread !== thread) return;
      const timeoutMs = this.#options.timeoutMs ?? DEFAULT_TRANSLATE_TIMEOUT_MS;
      pending.timer = setTimeout(() => this.#giveUp(thread, `over a configuration limit: translation took longer than ${timeoutMs / 1000} s`), timeoutMs);
      return;
    }
    let delivered: FedTranslation | Error | undefined;
    if (reply.type === 'updated') {
      try {
        // Applied even if the gateway is gone: the thread's next answer is a change from this one.
        const config = thread.config = applyUpdate(thread.config, reply.result);
        const { secretPaths, secretValues } = reply.result;
        delivered = { config, secretPaths, secretValues, problems: reply.problems, sourceErrors: reply.sourceErrors };
      } catch (err) {
        // We lost track of the thread's answers: start it again (it re-reads everything) on the next change.
        delivered = err as Error;
        this.#giveUp(thread, (err as Error).message, false);
      }
    } else if (reply.type === 'failed') {
      // The thread dropped its translator: its next answer is whole.
      thread.config = undefined;
      delivered = new Error(reply.message);
    } else if (reply.type === 'scan-failed') {
      if (pending?.first) pending.failure = new Error(reply.message);
      else this.#options.logger.error({ err: reply.message }, 'reading configuration files failed; keeping the current configuration');
    }
    if (delivered !== undefined && !this.#stopped) this.#hand(delivered);
    this.#answer(reply.id);
  }

  /** To the gateway, or kept for it until start(). */
  #hand(result: FedTranslation | Error): void {
    if (this.#deliver) this.#deliver(result);
    else this.#early.push(result);
  }

  /** Logs a line of one of the thread's loggers through ours, at its level. */
  #relog(logger: Logger, line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, ...fields } = record;
    const label = pino.levels.labels[level as number] as 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'fatal' | undefined;
    if (label === undefined) return;
    logger[label](fields, typeof msg === 'string' ? msg : '');
  }

  #answer(id: number): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.#pending.delete(id);
    if (pending.failure) pending.reject(pending.failure);
    else pending.resolve();
  }

  #answerAll(): void {
    for (const id of [...this.#pending.keys()]) this.#answer(id);
    for (const waiter of this.#statusWaiters.values()) waiter.reject(new Error('the config thread restarted'));
    this.#statusWaiters.clear();
  }

  /** Ends `thread` (if still the current one); what it owed is answered with `reason` as a failed reload. */
  #giveUp(thread: Thread, reason: string, deliver = true): void {
    if (this.#thread !== thread) return;
    this.#thread = undefined;
    void thread.worker.terminate();
    const owed = this.#pending.size > 0;
    if (owed && deliver && !this.#stopped) this.#hand(new TranslationAbortedError(reason));
    this.#answerAll();
  }
}
