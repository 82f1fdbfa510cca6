import type { HeapInfo } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { KubeObject, ObjectStatus } from '../api/gateway/object.ts';
import type { Logger } from '../common/logger.ts';
// The leaf, not incremental.ts: this module runs on the serving thread, which must not load the translator.
import { byObject, diffObjects, knownStatusId, objectKeyOf, statusId, type ConfigChanges, type ObjectDelta } from '../controller/translate/object-delta.ts';
import type { Bind, ProxyConfig } from '../ir/types.ts';
import { patchConfig } from '../ir/config-delta.ts';
import type { Translation } from './gateway.ts';
import { workerEntry } from '../common/entry-points.ts';

/**
 * The thread holds the objects between requests: the first request (and any after the thread
 * restarted, the objects could not be keyed or the options changed) carries them all in
 * `objects`, the others only what changed (`delta`, by identity).
 */
export interface TranslatorRequest {
  readonly id: number;
  readonly objects?: readonly KubeObject[];
  readonly delta?: ObjectDelta;
  readonly options: { controllerName?: string; proxyModels?: boolean };
}

/** A translation as the thread sends it back: the Routes and Backends that changed since its previous answer. */
export interface TranslationUpdate {
  readonly version: string;
  /**
   * `null` for a bind equal to the one at the same index in the previous answer (never on a full
   * answer): the receiver keeps that Bind object, so the proxy reuses the route tables of its
   * listeners (compile/config.ts) and nothing of it is cloned.
   */
  readonly binds: readonly (Bind | null)[];
  readonly changes: ConfigChanges;
  /** Whole only when `changes.statuses` is undefined (two statuses share an id). */
  readonly statuses?: ObjectStatus[];
  readonly secretPaths: readonly string[];
  readonly secretValues: readonly string[];
}

export type TranslatorReply =
  | { readonly type: 'ready' }
  | { readonly id: number; readonly type: 'done'; readonly result: Translation }
  | { readonly id: number; readonly type: 'updated'; readonly result: TranslationUpdate }
  | { readonly id: number; readonly type: 'failed'; readonly message: string };

export interface TranslatorThreadOptions {
  readonly logger: Logger;
  /** A translation that takes longer is given up on (the thread is restarted); the last good config keeps serving. */
  readonly timeoutMs?: number;
  /** The thread's V8 heap; a translation that needs more ends the thread, not the gateway. */
  readonly maxHeapMiB?: number;
  /** The thread's V8 young generation (default: V8's); smaller holds less memory for more frequent scavenges. */
  readonly youngGenerationMiB?: number;
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
  /** The objects the thread holds (by objectKeyOf), as last sent, and the options they were sent with. */
  held: Map<string, KubeObject> | undefined;
  heldOptions: string;
  /** The config and statuses of the thread's last answer: its next answer names the changes from them. */
  config: ProxyConfig | undefined;
  statuses: ObjectStatus[] | undefined;
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

  /**
   * translate() as the embedded gateway injects it (a TranslateFn); rejects with TranslationAbortedError past a limit.
   * `delta`, when the caller knows it, is what turns the objects of the previous call into `objects`
   * (the controller's source tracks it): sent as is instead of diffing all `objects` by identity.
   */
  readonly translate = (objects: readonly KubeObject[], options: { controllerName?: string; proxyModels?: boolean } = {}, delta?: ObjectDelta): Promise<Translation> => this.#translate(objects, options, delta);

  /**
   * Starts the thread now, so it loads the translator's modules (~0.5–1 s) while the caller does
   * something else (the controller lists the cluster) instead of when the first translation asks.
   */
  prepare(): void {
    if (!this.#closed) this.#ensureThread();
  }

  /**
   * The thread's V8 heap, for diagnostics (bench/controller-heap-child.ts): a heap snapshot of the
   * thread unless `snapshot` is false (taking one collects garbage first), then its heap
   * statistics; undefined while no thread runs.
   */
  async heap(snapshot = true): Promise<{ readonly snapshot: NodeJS.ReadableStream | undefined; readonly statistics: HeapInfo } | undefined> {
    const worker = this.#thread?.worker;
    if (!worker) return undefined;
    const taken = snapshot ? await worker.getHeapSnapshot() : undefined;
    return { snapshot: taken, statistics: await worker.getHeapStatistics() };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const thread = this.#thread;
    this.#thread = undefined;
    this.#failAll('the translator thread was stopped');
    await thread?.worker.terminate();
  }

  async #translate(objects: readonly KubeObject[], options: { controllerName?: string; proxyModels?: boolean }, delta: ObjectDelta | undefined): Promise<Translation> {
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
    thread.worker.postMessage(this.#request(thread, id, objects, options, delta));
    return result;
  }

  /** Only what changed since the thread's last request when it can; everything otherwise. */
  #request(thread: Thread, id: number, objects: readonly KubeObject[], options: { controllerName?: string; proxyModels?: boolean }, known: ObjectDelta | undefined): TranslatorRequest {
    const optionsId = JSON.stringify(options);
    if (known && thread.held && thread.heldOptions === optionsId && applyKnownDelta(thread.held, known)) return { id, delta: known, options };
    const diff = thread.held && thread.heldOptions === optionsId ? diffObjects(thread.held, objects) : undefined;
    if (diff) {
      thread.held = diff.next;
      return { id, delta: diff.delta, options };
    }
    const full = diffObjects(new Map(), objects);
    thread.held = full?.next;
    thread.heldOptions = optionsId;
    return { id, objects, options };
  }

  #ensureThread(): Thread {
    if (this.#thread) return this.#thread;
    const maxHeapMiB = this.#options.maxHeapMiB ?? DEFAULT_TRANSLATOR_HEAP_MIB;
    const worker = new Worker(this.#options.workerModule ?? workerEntry(new URL('./translator-thread-worker.ts', import.meta.url)), {
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMiB, ...(this.#options.youngGenerationMiB ? { maxYoungGenerationSizeMb: this.#options.youngGenerationMiB } : {}) },
    });
    // The thread must never keep the process alive on its own.
    worker.unref();
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => { markReady = resolve; });
    const thread: Thread = { worker, ready, held: undefined, heldOptions: '', config: undefined, statuses: undefined };
    worker.on('message', (reply: TranslatorReply) => {
      if (reply.type === 'ready') markReady();
      else this.#onReply(thread, reply);
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

  #onReply(thread: Thread, reply: Exclude<TranslatorReply, { type: 'ready' }>): void {
    let result: ProxyConfig | undefined;
    let statuses: ObjectStatus[] | undefined;
    let broken: Error | undefined;
    if (reply.type === 'updated') {
      // Applied even when nobody waits any more: the thread's next answer is a change from this one.
      try {
        result = thread.config = applyUpdate(thread.config, reply.result);
        statuses = thread.statuses = applyStatusUpdate(thread.statuses, reply.result);
      } catch (err) {
        broken = err as Error;
      }
    }
    if (reply.type === 'failed' || broken) {
      // The thread dropped what it held (or we lost track of its answers): the next request brings everything.
      thread.held = undefined;
      thread.config = undefined;
      thread.statuses = undefined;
    }
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.#pending.delete(reply.id);
    if (broken) pending.reject(broken);
    else if (reply.type === 'updated') {
      const { secretPaths, secretValues } = reply.result;
      pending.resolve({ config: result as ProxyConfig, statuses: statuses as ObjectStatus[], secretPaths, secretValues });
    } else if (reply.type === 'done') pending.resolve(reply.result);
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

/** `held` after `delta`, in place; false (held unchanged) when an upserted object has no key. */
function applyKnownDelta(held: Map<string, KubeObject>, delta: ObjectDelta): boolean {
  const keys = delta.upserted.map(objectKeyOf);
  if (keys.some((key) => key === undefined)) return false;
  for (const key of delta.removed) held.delete(key);
  delta.upserted.forEach((object, i) => held.set(keys[i] as string, object));
  return true;
}

/**
 * The config an update describes: `previous` with the changed Routes and Backends set and the
 * removed ones dropped; every other entry is the previous object (its identity is what the
 * proxy's compile caches and the remote slices key on). Records stay in key order.
 */
export function applyUpdate(previous: ProxyConfig | undefined, update: TranslationUpdate): ProxyConfig {
  const { changes } = update;
  if (changes.full || previous === undefined) {
    if (!changes.full) throw new Error('the translator thread sent changes without a previous config');
    return { version: update.version, binds: keptBinds(undefined, update.binds), routes: changes.routes.set, backends: changes.backends.set };
  }
  // patchConfig records what changed, so validateConfig checks the change, not the config (src/ir/config-delta.ts).
  return patchConfig(previous, update.version, keptBinds(previous.binds, update.binds), changes.routes, changes.backends);
}

/** The binds an update names, each `null` replaced by the previous bind at its index. */
function keptBinds(previous: readonly Bind[] | undefined, binds: readonly (Bind | null)[]): Bind[] {
  return binds.map((bind, i) => {
    if (bind !== null) return bind;
    const before = previous?.[i];
    if (before === undefined) throw new Error('the translator thread kept a bind it never sent');
    return before;
  });
}

/**
 * Each status list's positions by statusId, built when the list is made and handed on to the next
 * list while no status moves: an edit that only changes statuses in place (most edits) replaces
 * them by position in a copy, instead of walking 11k statuses and their ids (~7 ms per edit warm,
 * ~50 ms on the controller's first edit, cold).
 */
const positionsOf = new WeakMap<readonly ObjectStatus[], ReadonlyMap<string, number>>();

/** The statuses an update describes: the previous ones with changes applied, in the translator's order. */
export function applyStatusUpdate(previous: readonly ObjectStatus[] | undefined, update: TranslationUpdate): ObjectStatus[] {
  const changes = update.changes.statuses;
  if (changes === undefined) {
    if (!update.statuses) throw new Error('the translator thread sent neither statuses nor their changes');
    return update.statuses;
  }
  if (update.changes.full || previous === undefined) {
    if (!update.changes.full) throw new Error('the translator thread sent status changes without previous statuses');
    const statuses: ObjectStatus[] = [];
    const positions = new Map<string, number>();
    for (const [id, status] of Object.entries(changes.set)) {
      knownStatusId(status, id);
      positions.set(id, statuses.length);
      statuses.push(status);
    }
    positionsOf.set(statuses, positions);
    return statuses;
  }
  return replacedInPlace(previous, changes.set, changes.removed) ?? mergedStatuses(previous, changes.set, changes.removed);
}

/** Undefined unless every change replaces a status at a known position (nothing removed, nothing new). */
function replacedInPlace(previous: readonly ObjectStatus[], set: Readonly<Record<string, ObjectStatus>>, removed: readonly string[]): ObjectStatus[] | undefined {
  const positions = positionsOf.get(previous);
  if (positions === undefined || removed.length > 0) return undefined;
  for (const id in set) {
    const at = positions.get(id);
    // Also checks the list still holds that status there (a caller that reordered it gets the merge).
    if (at === undefined || previous[at] === undefined || statusId(previous[at]) !== id) return undefined;
  }
  const out = previous.slice();
  for (const id in set) {
    const next = set[id] as ObjectStatus;
    knownStatusId(next, id);
    out[positions.get(id) as number] = next;
  }
  positionsOf.set(out, positions);
  return out;
}

/** Removals and new statuses: a walk of the previous list, new ones merged in the translator's object order. */
function mergedStatuses(previous: readonly ObjectStatus[], set: Readonly<Record<string, ObjectStatus>>, removedIds: readonly string[]): ObjectStatus[] {
  const removed = new Set(removedIds);
  // Only the changed ids found among the previous statuses are noted (not all 11k): the rest of `set` is new.
  const replaced = new Set<string>();
  let out: ObjectStatus[] = [];
  for (const status of previous) {
    const id = statusId(status);
    if (removed.has(id)) {
      if (Object.hasOwn(set, id)) replaced.add(id);
      continue;
    }
    if (Object.hasOwn(set, id)) {
      replaced.add(id);
      const next = set[id] as ObjectStatus;
      knownStatusId(next, id);
      out.push(next);
    } else out.push(status);
  }
  const added = Object.keys(set).filter((id) => !replaced.has(id));
  if (added.length > 0) {
    for (const id of added) knownStatusId(set[id] as ObjectStatus, id);
    out = [...out, ...added.map((id) => set[id] as ObjectStatus)].sort(byObject);
  }
  const positions = new Map<string, number>();
  out.forEach((status, i) => positions.set(statusId(status), i));
  positionsOf.set(out, positions);
  return out;
}

