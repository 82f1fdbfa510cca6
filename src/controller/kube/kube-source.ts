/**
 * The Kubernetes source: one client-node ListWatch (list, then watch from the list's
 * resourceVersion; re-list after 410 Gone) per kind the translator reads, turned into complete
 * snapshots for the same store and translator embedded mode uses.
 *
 * - Snapshots are built from the informers' caches at most once per `debounceMs`, and no event
 *   waits longer than `debounceMs` to be seen. A change after a quiet spell (no snapshot in the
 *   last `debounceMs`) is delivered at once, after the events already read with it (setImmediate):
 *   a single edit — the common case — does not sit out a timer (20 ms of a 100 ms budget). Events
 *   that follow within `debounceMs` wait for the timer and become one snapshot; while a snapshot
 *   is being translated, later ones replace each other (ControllerFeed), so a burst (a
 *   `kubectl apply -f` of a hundred objects) still costs about two translations.
 * - The first snapshot waits until every required kind has listed: a snapshot without, say, the
 *   Services would translate into a config with every backend missing.
 * - A snapshot holds the objects as this source last accepted them, not the informers' caches: a
 *   status-only change (the status writer's own write coming back as a watch event) keeps the
 *   object it replaces. Everything downstream compares objects by identity (the translator
 *   thread's delta, the translator's memos, the distributor's serialisation cache), so an echo
 *   that swapped in a new object would make every object the leader wrote status for (all of
 *   them after its first write) look changed on the next edit: a full retranslation. The
 *   translator reads no status and no resourceVersion of the objects it is given.
 * - Each snapshot after the first also names what changed since the one before it (`delta`,
 *   see kubeDelta()): the objects added or replaced and the keys removed. The translator thread
 *   takes that instead of diffing all 11k objects by identity on the serving thread.
 * - A watch or list that fails is restarted with backoff (client-node's ListWatch stops on any
 *   error other than 410 and client timeouts); meanwhile the last snapshot keeps being served.
 * - The total number of objects is bounded (`maxObjects`): past it the source stops delivering
 *   snapshots, logs and keeps the last good one, instead of growing without limit.
 */
import { ListWatch, Watch, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { KubeObject, SourcedObject } from '../../api/gateway/object.ts';
import type { Logger } from '../../common/logger.ts';
import type { ConfigProblem, ObjectSource, SourceSnapshot } from '../sources/types.ts';
import { KubeApiError, type KubeClient } from './client.ts';
import { objectKeyOf, type ObjectDelta } from '../translate/object-delta.ts';
import { collectionPath, WATCHED_KINDS, type WatchedKind } from './kinds.ts';
import { namespaceSelected, type LabelSelector } from './namespace-selector.ts';

export interface KubeSourceOptions {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly kinds?: readonly WatchedKind[];
  /** `discoveryNamespaceSelectors`: namespaced objects outside the selected namespaces are not read. */
  readonly namespaceSelectors?: readonly LabelSelector[];
  readonly debounceMs?: number;
  readonly maxObjects?: number;
  /** First and longest wait before restarting a failed list/watch. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  /** How often a missing optional kind (its CRD not installed) is looked for again. */
  readonly optionalRetryMs?: number;
}

// Short: a route change has a 100 ms budget to reach a proxy (bench/control-plane.ts), translation included.
export const DEFAULT_DEBOUNCE_MS = 20;
export const DEFAULT_MAX_OBJECTS = 250_000;

/** An object as the source accepted it; `print` (kinds with a status subresource) is what a non-status change would alter. */
interface Accepted {
  readonly object: KubeObject;
  readonly print: string | undefined;
  /**
   * What the informer's cache holds for it, which observed() hands the status writer: `object`,
   * or the echo of a status write when adoptEcho could not put `object` back in its place.
   */
  observed: KubeObject;
}

/** Bound of the replaced-objects log (takeReplaced()): past it the reader is told to look at everything. */
export const MAX_REPLACED_LOG = 50_000;

interface KindState {
  readonly kind: WatchedKind;
  readonly informer: ListWatch<KubernetesObject>;
  /** By `namespace/name`: what snapshots hand over (see the module comment). */
  readonly accepted: Map<string, Accepted>;
  listed: boolean;
  /** An optional kind whose list answered 404: counted as empty until it appears. */
  absent: boolean;
  failures: number;
  restart: NodeJS.Timeout | undefined;
}

/** A snapshot of this source: with `delta` when it can say what changed since the previous one. */
export interface KubeSnapshot extends SourceSnapshot {
  readonly delta?: ObjectDelta;
}

/** The delta a snapshot carries, when it came from a KubeSource and could name one. */
export function kubeDelta(snapshot: SourceSnapshot): ObjectDelta | undefined {
  return (snapshot as KubeSnapshot).delta;
}

/**
 * Whether `snapshot` may differ from the previous one in objects of `kinds`: true unless its
 * delta names no object of those kinds. Readers of a few kinds (session keys, provisioning)
 * skip their pass over all objects when a change is elsewhere (a route edit).
 */
export function deltaTouches(snapshot: SourceSnapshot, kinds: ReadonlySet<string>): boolean {
  const delta = kubeDelta(snapshot);
  if (!delta) return true;
  // objectKeyOf keys are `kind/namespace/name`.
  return delta.upserted.some((o) => kinds.has(o.kind)) || delta.removed.some((key) => kinds.has(key.slice(0, key.indexOf('/'))));
}

export class KubeSource implements ObjectSource {
  readonly #options: KubeSourceOptions;
  readonly #selectors: readonly LabelSelector[];
  readonly #states: KindState[] = [];
  /** #states by apiVersion, then kind (observed()). */
  readonly #statesByApiVersion = new Map<string, Map<string, KindState>>();
  #onSnapshot: ((snapshot: SourceSnapshot) => void) | undefined;
  /** Cancels the scheduled delivery (a debounce timer, or setImmediate after a quiet spell); undefined: none scheduled. */
  #scheduled: (() => void) | undefined;
  /** performance.now() of the last snapshot built (−Infinity: none since start). */
  #lastDelivery = -Infinity;
  #started = false;
  #stopped = false;
  #overLimit = false;
  /**
   * Per object changed since the last delivered snapshot (by kind index and key): what that
   * snapshot held for it. undefined entries: the object was not in it.
   */
  #before = new Map<string, KubeObject | undefined>();
  /** The next snapshot cannot name a delta (the first one; a Namespace changed under selectors). */
  #deltaLost = true;
  #allListed: (() => void) | undefined;
  /**
   * Per trackReplaced() reader: the objects observed() stopped returning or that changed in place
   * since it last read; undefined once it overflowed MAX_REPLACED_LOG (it looks at everything).
   */
  readonly #replacedLogs = new Set<{ objects: KubeObject[] | undefined }>();

  constructor(options: KubeSourceOptions) {
    this.#options = options;
    this.#selectors = options.namespaceSelectors ?? [];
  }

  async start(onSnapshot: (snapshot: SourceSnapshot) => void): Promise<void> {
    this.#onSnapshot = onSnapshot;
    const watch = new Watch(this.#options.client.kubeConfig);
    const listed = new Promise<void>((resolve) => { this.#allListed = resolve; });
    for (const kind of this.#options.kinds ?? WATCHED_KINDS) {
      const state = this.#informer(kind, watch);
      this.#states.push(state);
      const kinds = this.#statesByApiVersion.get(kind.apiVersion) ?? new Map<string, KindState>();
      // The first state of an apiVersion and kind answers, as the search this replaces did.
      if (!kinds.has(kind.kind)) kinds.set(kind.kind, state);
      this.#statesByApiVersion.set(kind.apiVersion, kinds);
    }
    await Promise.all(this.#states.map((s) => s.informer.start()));
    this.#checkListed();
    await listed;
    if (this.#stopped) return;
    this.#started = true;
    this.#deliver();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#scheduled?.();
    this.#scheduled = undefined;
    this.#allListed?.();
    for (const state of this.#states) {
      clearTimeout(state.restart);
      await state.informer.stop();
    }
  }

  /**
   * A reader of the objects observed() returned before and no longer returns as they were
   * (replaced, deleted, or changed in place by a status echo): each call answers those since the
   * previous call (the first: since trackReplaced()). undefined when more than MAX_REPLACED_LOG
   * piled up between two calls: the reader must treat every object as changed. The status writer
   * reads it so a flush compares only the statuses whose cluster copy moved.
   */
  trackReplaced(): () => readonly KubeObject[] | undefined {
    const log: { objects: KubeObject[] | undefined } = { objects: [] };
    this.#replacedLogs.add(log);
    return () => {
      const objects = log.objects;
      log.objects = [];
      return objects;
    };
  }

  #noteReplaced(object: KubeObject): void {
    for (const log of this.#replacedLogs) {
      if (log.objects === undefined) continue;
      // Past the bound the log is dropped, not kept growing for a reader that stopped reading.
      if (log.objects.length >= MAX_REPLACED_LOG) log.objects = undefined;
      else log.objects.push(object);
    }
  }

  /** The object as last seen in the cluster (status included), for the status writer. */
  observed(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined {
    // Two map look-ups, no search or string building: the status writer asks once per status per flush (11k).
    const state = this.#statesByApiVersion.get(apiVersion)?.get(kind);
    if (!state) return undefined;
    return state.informer.get(name, state.kind.namespaced ? (namespace ?? 'default') : undefined) as KubeObject | undefined;
  }

  #informer(kind: WatchedKind, watch: Watch): KindState {
    const { client } = this.#options;
    const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
      try {
        const answer = await client.request<KubernetesListObject<KubernetesObject>>('GET', collectionPath(kind));
        // Built-in kinds' list items carry no apiVersion/kind; the translator needs both.
        for (const item of answer.items as KubeObject[]) {
          item.apiVersion = kind.apiVersion;
          item.kind = kind.kind;
          trim(item);
        }
        state.absent = false;
        return answer;
      } catch (err) {
        if (kind.optional && err instanceof KubeApiError && err.statusCode === 404) state.absent = true;
        throw err;
      }
    };
    // Bookmarks keep a quiet kind's resourceVersion fresh, so resuming after the client's watch
    // timeout does not fall behind the server's history (which would force a full re-list).
    const informer = new ListWatch<KubernetesObject>(`${collectionPath(kind)}?allowWatchBookmarks=true`, watch, list, false);
    const state: KindState = { kind, informer, accepted: new Map(), listed: false, absent: false, failures: 0, restart: undefined };
    const index = this.#states.length;
    const accept = (object: KubeObject, print: string | undefined): void => {
      const key = acceptedKey(object);
      const previous = state.accepted.get(key);
      this.#remember(index, key, previous?.object);
      if (previous && kind.hasStatus) this.#noteReplaced(previous.observed);
      state.accepted.set(key, { object, print, observed: object });
      this.#changed();
    };
    informer.on('add', (object) => {
      trim(object as KubeObject);
      accept(object as KubeObject, kind.hasStatus ? fingerprint(object) : undefined);
    });
    informer.on('update', (object) => {
      trim(object as KubeObject);
      // The translator never reads status: a status-only change (ours, written back) is no
      // change, and the object it replaces stays the one handed over (identity is what the
      // stages after this one compare), now carrying the new status for observed().
      const print = kind.hasStatus ? fingerprint(object) : undefined;
      const held = print === undefined ? undefined : state.accepted.get(acceptedKey(object));
      if (held && held.print === print) {
        // Changed in place (adopted), or replaced by the echo in the cache: either way not what the writer compared.
        this.#noteReplaced(held.observed);
        held.observed = adoptEcho(informer, held.object, object as KubeObject) ? held.object : object as KubeObject;
        return;
      }
      accept(object as KubeObject, print);
    });
    informer.on('delete', (object) => {
      const key = acceptedKey(object);
      const gone = state.accepted.get(key);
      if (!gone) return;
      if (kind.hasStatus) this.#noteReplaced(gone.observed);
      this.#remember(index, key, gone.object);
      state.accepted.delete(key);
      this.#changed();
    });
    informer.on('error', (err: unknown) => this.#failed(state, err));
    return state;
  }

  #failed(state: KindState, err: unknown): void {
    if (this.#stopped) return;
    const { logger } = this.#options;
    let delay: number;
    if (state.absent) {
      delay = this.#options.optionalRetryMs ?? 30_000;
      if (!state.listed) logger.info({ kind: state.kind.kind, apiVersion: state.kind.apiVersion }, 'kind not served by this cluster (CRD not installed); looking again later');
      state.listed = true;
      this.#checkListed();
    } else {
      state.failures++;
      const base = this.#options.retryBaseMs ?? 1000;
      delay = Math.min(base * 2 ** (state.failures - 1), this.#options.retryMaxMs ?? 30_000);
      logger.warn({ kind: state.kind.kind, err: (err as Error)?.message ?? String(err), retryInMs: delay }, 'list/watch failed; retrying (the last snapshot stays served)');
    }
    state.restart = setTimeout(() => {
      state.restart = undefined;
      if (!this.#stopped) void state.informer.start().then(() => this.#checkListed());
    }, delay);
    state.restart.unref();
  }

  /** A kind has listed once its informer holds a resourceVersion (ListWatch sets it from the list). */
  #checkListed(): void {
    for (const state of this.#states) {
      if (!state.listed && state.informer.latestResourceVersion() !== '') {
        state.listed = true;
        state.failures = 0;
      }
    }
    if (this.#states.length > 0 && this.#states.every((s) => s.listed)) this.#allListed?.();
  }

  #changed(): void {
    if (!this.#started || this.#stopped || this.#scheduled) return;
    const debounceMs = this.#options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    const wait = this.#lastDelivery + debounceMs - performance.now();
    const fire = (): void => {
      this.#scheduled = undefined;
      this.#deliver();
    };
    // Quiet since the last snapshot: now, after whatever else this read of the watch brought.
    if (wait <= 0) {
      const immediate = setImmediate(fire);
      this.#scheduled = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(fire, wait);
      this.#scheduled = () => clearTimeout(timer);
    }
  }

  /** Notes what the last delivered snapshot held for an object about to change (its first change since). */
  #remember(index: number, key: string, previous: KubeObject | undefined): void {
    // The first snapshot (and any after a lost delta) is taken whole: nothing to note.
    if (this.#deltaLost) return;
    const id = `${index}\u0000${key}`;
    if (!this.#before.has(id)) this.#before.set(id, previous);
    // Which objects the selectors pick may have changed with a Namespace's labels.
    if (this.#selectors.length > 0 && this.#states[index]?.kind.kind === 'Namespace') this.#deltaLost = true;
  }

  /** What turns the previous delivered snapshot into the one being built; undefined when it cannot be named. */
  #delta(selected: ReadonlySet<string> | undefined): ObjectDelta | undefined {
    if (this.#deltaLost) return undefined;
    const upserted: KubeObject[] = [];
    const removed: string[] = [];
    for (const [id, previous] of this.#before) {
      const at = id.indexOf('\u0000');
      const state = this.#states[Number(id.slice(0, at))] as KindState;
      const now = state.accepted.get(id.slice(at + 1))?.object;
      if (now === previous) continue;
      // Selection did not change (no Namespace changed under selectors): an object outside it was not in the previous snapshot either.
      if (now !== undefined && this.#selected(now, state.kind, selected)) upserted.push(now);
      else if (previous !== undefined && this.#selected(previous, state.kind, selected)) {
        const key = objectKeyOf(previous);
        if (key === undefined) return undefined;
        removed.push(key);
      }
    }
    return { upserted, removed };
  }

  #deliver(): void {
    if (this.#stopped) return;
    this.#lastDelivery = performance.now();
    const snapshot = this.#snapshot();
    if (snapshot) this.#onSnapshot?.(snapshot);
  }

  #snapshot(): KubeSnapshot | undefined {
    const limit = this.#options.maxObjects ?? DEFAULT_MAX_OBJECTS;
    let total = 0;
    for (const state of this.#states) total += state.accepted.size;
    if (total > limit) {
      if (!this.#overLimit) this.#options.logger.error({ objects: total, limit }, 'the cluster holds more objects than --max-objects; still serving the last snapshot');
      this.#overLimit = true;
      return undefined;
    }
    this.#overLimit = false;
    const selectedNamespaces = this.#selectedNamespaces();
    const objects: SourcedObject[] = [];
    const problems: ConfigProblem[] = [];
    for (const state of this.#states) {
      for (const { object } of state.accepted.values()) {
        if (!this.#selected(object, state.kind, selectedNamespaces)) continue;
        objects.push({ object });
      }
    }
    const delta = this.#delta(selectedNamespaces);
    this.#before = new Map();
    this.#deltaLost = false;
    return delta ? { objects, problems, delta } : { objects, problems };
  }

  /** Names of the namespaces the selectors pick, or undefined when every namespace is read. */
  #selectedNamespaces(): ReadonlySet<string> | undefined {
    if (this.#selectors.length === 0) return undefined;
    const namespaces = this.#states.find((s) => s.kind.kind === 'Namespace' && s.kind.apiVersion === 'v1');
    const selected = new Set<string>();
    for (const { object: ns } of namespaces?.accepted.values() ?? []) {
      if (namespaceSelected(ns.metadata.labels ?? {}, this.#selectors)) selected.add(ns.metadata.name);
    }
    return selected;
  }

  #selected(object: KubeObject, kind: WatchedKind, selected: ReadonlySet<string> | undefined): boolean {
    if (!selected) return true;
    if (kind.kind === 'Namespace') return selected.has(object.metadata.name);
    if (!kind.namespaced) return true;
    return selected.has(object.metadata.namespace ?? 'default');
  }
}

/**
 * A status-only change: `accepted` (the object snapshots hand over) takes the echo's status and
 * metadata (resourceVersion) and replaces the echo in the informer's cache, so each object is
 * held once — without this, after the leader's first status write every object of a kind with
 * status lived twice (the accepted one and the informer's echo). The spec is the same: the
 * generation did not move. ListWatch keeps its cache in a private `objects` map (namespace →
 * name → object); a client-node that stores it otherwise leaves the echo in place (held twice,
 * as before: memory only — observed() reads the cache either way).
 */
function adoptEcho(informer: ListWatch<KubernetesObject>, accepted: KubeObject, echo: KubeObject): boolean {
  const cache = (informer as unknown as { objects?: unknown }).objects;
  if (!(cache instanceof Map)) return false;
  const names: unknown = cache.get(echo.metadata.namespace ?? '');
  if (!(names instanceof Map) || names.get(echo.metadata.name) !== echo) return false;
  accepted.metadata = echo.metadata;
  if (echo.status === undefined) delete accepted.status;
  else accepted.status = echo.status;
  names.set(echo.metadata.name, accepted);
  return true;
}

/** Unique within one kind (the informer's own keying). */
function acceptedKey(object: { metadata?: { namespace?: string; name?: string } }): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

/** Status subresource kinds bump generation on every spec change; labels and annotations do not bump it. */
function fingerprint(object: KubernetesObject): string {
  const m = object.metadata;
  return JSON.stringify([m?.generation, m?.labels, m?.annotations, m?.deletionTimestamp]);
}

/** managedFields can outweigh the object itself and nothing downstream reads them. */
function trim(object: KubeObject): void {
  const metadata = object.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  if (metadata?.managedFields !== undefined) delete metadata.managedFields;
}
