import type { HeapInfo } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../../common/logger.ts';
import { formatBytes, type ConfigLimits } from './limits.ts';
import { brokenFile } from './parsed-file.ts';
import type { FileRead } from './read.ts';
import { workerEntry } from '../../../common/entry-points.ts';

export interface ParserRequest {
  readonly id: number;
  readonly file: string;
  readonly previousHash: string | undefined;
}

export type ParserReply =
  | { readonly id: number; readonly type: 'hashed'; readonly hash: string; readonly bytes: number }
  | { readonly id: number; readonly type: 'done'; readonly result: FileRead };

export interface ParserThreadOptions {
  readonly limits: ConfigLimits;
  readonly logger: Logger;
  /** A file whose parse takes longer is given up on (the thread is restarted) and reported. */
  readonly timeoutMs?: number;
  /** The thread's V8 heap; a parse that needs more ends the thread, not the gateway. */
  readonly maxHeapMiB?: number;
  /** The module the thread runs; tests swap in a misbehaving one. */
  readonly workerModule?: URL;
}

export const DEFAULT_PARSE_TIMEOUT_MS = 30_000;
export const DEFAULT_PARSER_HEAP_MIB = 1024;

/**
 * A parse's garbage is short-lived (its result is cloned to the caller): a small young generation
 * keeps the idle thread's footprint small (~35 MiB less RSS at 10k routes) at no measured cost.
 */
const PARSER_YOUNG_GENERATION_MIB = 8;

interface Pending {
  readonly id: number;
  readonly file: string;
  readonly previousHash: string | undefined;
  readonly resolve: (read: FileRead) => void;
  hashed?: { hash: string; bytes: number };
  /** Runs only while this file is the one being parsed (the head of the queue). */
  timer?: NodeJS.Timeout;
}

/**
 * Reads and parses configuration files in a worker thread, so a large or hostile file costs the
 * thread time and memory but never blocks the event loop that serves requests (with `--workers 1`
 * the proxy shares the control plane's process). A parse that runs past `timeoutMs` or out of the
 * thread's heap is reported as that file's error; the thread is restarted for the next file.
 *
 * Reads may be asked for all at once (a scan of 100 files does): they are posted at once and the
 * thread works through them in order without waiting for a round trip between files, while the
 * asking thread does other work (issue 15: the config thread loads the translator meanwhile).
 * Each file still has `timeoutMs` of its own: the clock of a file starts when the files before it
 * are answered, and a file that fails the thread fails alone — the files queued after it are
 * posted again to the new thread.
 */
export class ParserThread {
  readonly #options: ParserThreadOptions;
  #worker: Worker | undefined;
  /** In the order posted, which is the order the thread answers: the first is being parsed. */
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closed = false;

  constructor(options: ParserThreadOptions) {
    this.#options = options;
  }

  /** Starts the thread now (its modules load) rather than at the first read. */
  prestart(): void {
    if (!this.#closed) this.#ensureWorker();
  }

  read(file: string, previousHash: string | undefined): Promise<FileRead> {
    if (this.#closed) return Promise.resolve({ kind: 'read', bytes: 0, hash: 'closed', parsed: brokenFile([{ severity: 'error', file, message: 'the parser thread was stopped' }]) });
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const pending: Pending = { id, file, previousHash, resolve };
      this.#pending.set(id, pending);
      this.#post(worker, pending);
      this.#clockHead(worker);
    });
  }

  /** The thread's V8 heap, or undefined when no thread runs (diagnostics; tests of its idle GC). */
  heapStatistics(): Promise<HeapInfo | undefined> {
    return this.#worker && !this.#closed ? this.#worker.getHeapStatistics() : Promise.resolve(undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    for (const pending of [...this.#pending.values()]) this.#fail(pending, 'the parser thread was stopped');
    await worker?.terminate();
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const maxHeapMiB = this.#options.maxHeapMiB ?? DEFAULT_PARSER_HEAP_MIB;
    const worker = new Worker(this.#options.workerModule ?? workerEntry(new URL('./parser-thread-worker.ts', import.meta.url)), {
      workerData: { limits: this.#options.limits },
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMiB, maxYoungGenerationSizeMb: PARSER_YOUNG_GENERATION_MIB },
    });
    // The thread must never keep the process alive on its own.
    worker.unref();
    worker.on('message', (reply: ParserReply) => this.#onReply(worker, reply));
    worker.on('error', (err: Error & { code?: string }) => {
      const reason = err.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `over a configuration limit: parsing needed more than the parser thread's ${formatBytes(maxHeapMiB * 1024 * 1024)} of memory`
        : `the parser thread failed: ${err.message}`;
      this.#options.logger.error({ err: err.message }, 'configuration parser thread failed; restarting it');
      this.#giveUp(worker, reason);
    });
    worker.on('exit', () => this.#giveUp(worker, 'the parser thread exited'));
    this.#worker = worker;
    return worker;
  }

  #post(worker: Worker, pending: Pending): void {
    worker.postMessage({ id: pending.id, file: pending.file, previousHash: pending.previousHash } satisfies ParserRequest);
  }

  /** Starts the time limit of the file being parsed now, if not yet started. */
  #clockHead(worker: Worker): void {
    const head = this.#pending.values().next().value;
    if (!head || head.timer) return;
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_PARSE_TIMEOUT_MS;
    head.timer = setTimeout(() => this.#giveUp(worker, `over a configuration limit: parsing took longer than ${timeoutMs / 1000} s`), timeoutMs);
  }

  #onReply(worker: Worker, reply: ParserReply): void {
    if (this.#worker !== worker) return;
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    if (reply.type === 'hashed') {
      pending.hashed = { hash: reply.hash, bytes: reply.bytes };
      return;
    }
    clearTimeout(pending.timer);
    this.#pending.delete(reply.id);
    pending.resolve(reply.result);
    this.#clockHead(worker);
  }

  /**
   * Ends `worker` (if still the current one): the file it was parsing is answered with `reason`;
   * the files queued after it go to a new thread.
   */
  #giveUp(worker: Worker, reason: string): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    void worker.terminate();
    const head = this.#pending.values().next().value;
    if (head) this.#fail(head, reason);
    if (this.#pending.size === 0 || this.#closed) return;
    const next = this.#ensureWorker();
    for (const pending of this.#pending.values()) this.#post(next, pending);
    this.#clockHead(next);
  }

  #fail(pending: Pending, reason: string): void {
    clearTimeout(pending.timer);
    this.#pending.delete(pending.id);
    // Keyed by the content's hash when known, so the same content is not parsed again until it changes.
    const hash = pending.hashed?.hash ?? `failed:${Date.now()}:${pending.id}`;
    pending.resolve({ kind: 'read', bytes: pending.hashed?.bytes ?? 0, hash, parsed: brokenFile([{ severity: 'error', file: pending.file, message: reason }]) });
  }
}
