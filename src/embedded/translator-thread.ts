import { Worker } from 'node:worker_threads';
import type { KubeObject } from '../api/gateway/object.ts';
import type { Logger } from '../common/logger.ts';
import type { Translation } from './gateway.ts';

export interface TranslatorRequest {
  readonly id: number;
  readonly objects: readonly KubeObject[];
  readonly options: { controllerName?: string };
}

export type TranslatorReply =
  | { readonly type: 'ready' }
  | { readonly id: number; readonly type: 'done'; readonly result: Translation }
  | { readonly id: number; readonly type: 'failed'; readonly message: string };

export interface TranslatorThreadOptions {
  readonly logger: Logger;
  /** A translation that takes longer is given up on (the thread is restarted); the last good config keeps serving. */
  readonly timeoutMs?: number;
  /** The thread's V8 heap; a translation that needs more ends the thread, not the gateway. */
  readonly maxHeapMiB?: number;
  /** The module the thread runs; tests swap in a misbehaving one. */
  readonly workerModule?: URL;
}

/** Generous: 10,000 routes with a policy each translate in 2–5 s on a loaded 2-core machine. */
export const DEFAULT_TRANSLATE_TIMEOUT_MS = 30_000;
/** Objects and IR of the largest config the file limits admit (64 MiB of YAML) fit with room to spare. */
export const DEFAULT_TRANSLATOR_HEAP_MIB = 1024;

/** Why a translation produced no result; the gateway logs it, counts a failed reload and keeps the last good config. */
export class TranslationAbortedError extends Error {
  override readonly name = 'TranslationAbortedError';
}

interface Pending {
  readonly resolve: (result: Translation) => void;
  readonly reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

interface Thread {
  readonly worker: Worker;
  /** Resolves once the thread has loaded the translator, so loading is not counted against a translation's time. */
  readonly ready: Promise<void>;
}

/**
 * Runs translate() in a worker thread, so translating a large config costs that thread time and
 * memory but never blocks the event loop that serves requests (with `--workers 1` the proxy
 * shares the control plane's process and loop). The objects go in and the result comes back by
 * structured clone: the IR, statuses and Secret locations are plain JSON data.
 */
export class TranslatorThread {
  readonly #options: TranslatorThreadOptions;
  #thread: Thread | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #closed = false;

  constructor(options: TranslatorThreadOptions) {
    this.#options = options;
  }

  /** translate() as the embedded gateway injects it (a TranslateFn); rejects with TranslationAbortedError past a limit. */
  readonly translate = (objects: readonly KubeObject[], options: { controllerName?: string } = {}): Promise<Translation> => this.#translate(objects, options);

  async close(): Promise<void> {
    this.#closed = true;
    const thread = this.#thread;
    this.#thread = undefined;
    this.#failAll('the translator thread was stopped');
    await thread?.worker.terminate();
  }

  async #translate(objects: readonly KubeObject[], options: { controllerName?: string }): Promise<Translation> {
    if (this.#closed) throw new TranslationAbortedError('the translator thread was stopped');
    const thread = this.#ensureThread();
    const id = this.#nextId++;
    const result = new Promise<Translation>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    await thread.ready;
    const pending = this.#pending.get(id);
    // The thread failed while loading (or was closed): #failAll already rejected `result`.
    if (!pending || this.#thread !== thread) return result;
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_TRANSLATE_TIMEOUT_MS;
    pending.timer = setTimeout(() => this.#giveUp(thread, `over a configuration limit: translation took longer than ${timeoutMs / 1000} s`), timeoutMs);
    thread.worker.postMessage({ id, objects, options } satisfies TranslatorRequest);
    return result;
  }

  #ensureThread(): Thread {
    if (this.#thread) return this.#thread;
    const maxHeapMiB = this.#options.maxHeapMiB ?? DEFAULT_TRANSLATOR_HEAP_MIB;
    const worker = new Worker(this.#options.workerModule ?? new URL('./translator-thread-worker.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMiB },
    });
    // The thread must never keep the process alive on its own.
    worker.unref();
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => { markReady = resolve; });
    const thread: Thread = { worker, ready };
    worker.on('message', (reply: TranslatorReply) => {
      if (reply.type === 'ready') markReady();
      else this.#onReply(reply);
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const reason = err.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `over a configuration limit: translation needed more than the translator thread's ${maxHeapMiB} MiB of memory`
        : `the translator thread failed: ${err.message}`;
      this.#options.logger.error({ err: err.message }, 'configuration translator thread failed; restarting it');
      this.#giveUp(thread, reason);
    });
    worker.on('exit', () => this.#giveUp(thread, 'the translator thread exited'));
    // A thread that ended before saying ready has already failed everything it owed; let waiters go on.
    worker.once('exit', markReady);
    this.#thread = thread;
    return thread;
  }

  #onReply(reply: Exclude<TranslatorReply, { type: 'ready' }>): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.#pending.delete(reply.id);
    if (reply.type === 'done') pending.resolve(reply.result);
    // translate() threw: a translator bug, reported like one thrown in-process.
    else pending.reject(new Error(reply.message));
  }

  /** Ends `thread` (if still the current one) and fails everything it owed with `reason`. */
  #giveUp(thread: Thread, reason: string): void {
    if (this.#thread !== thread) return;
    this.#thread = undefined;
    void thread.worker.terminate();
    this.#failAll(reason);
  }

  #failAll(reason: string): void {
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      this.#pending.delete(id);
      pending.reject(new TranslationAbortedError(reason));
    }
  }
}
