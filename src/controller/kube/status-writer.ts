/**
 * The status writer of Kubernetes mode: everything the embedded writer does (keeps the latest
 * statuses for the admin endpoint, owns lastTransitionTime, logs changes), plus it writes each
 * object's status to the API server through the status subresource.
 *
 * - Server-side apply with field manager `switchboard-controller` (`force`: the controller is the
 *   authority on the status it computes).
 * - Conflict-safe: status lists are atomic, so another controller's `parents[]`/`ancestors[]`
 *   entries (another `controllerName`) seen on the object are carried over, and the apply names
 *   the resourceVersion it was computed against as a precondition; a 409 means the object moved
 *   on, and the write is retried against the newer copy.
 * - Only when changed: an object whose status in the cluster already equals the computed one is
 *   not written; lastTransitionTime comes from the cluster's copy when a condition's status and
 *   reason did not change, so a controller restart or a leader change does not restamp them.
 * - Only on the leader (`isLeader`); a new leader writes everything that differs (`resync`).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Condition, KubeObject, ObjectStatus } from '../../api/gateway/object.ts';
import type { Logger } from '../../common/logger.ts';
import { forEachCondition, StatusWriter } from '../../embedded/status-writer.ts';
import { KubeApiError, type KubeClient } from './client.ts';
import { findWatchedKind, groupOf, objectPath, type WatchedKind } from './kinds.ts';

export const FIELD_MANAGER = 'switchboard-controller';
const APPLY_PATCH = 'application/apply-patch+yaml';
/** Status writes in flight at once: enough to write thousands of routes quickly, few enough not to flood the API server. */
const CONCURRENCY = 8;
const YIELD_EVERY = 500;
/** Bound of the kind look-up memo, per level (apiVersions, kinds of one): watched kinds are ~16. */
const MAX_REMEMBERED_API_VERSIONS = 64;
/**
 * After a flush that wrote, the statuses are compared again this much later, once the watch has
 * brought the writes back: the leader's first write (11k objects) is confirmed while the cluster
 * is quiet, not by the flush after the next route edit (11k comparisons competing with that
 * edit's way to the proxies — the slow first edit after start-up).
 */
export const VERIFY_AFTER_WRITE_MS = 500;
/** Writes in one flush that make a burst (KubeStatusWriterOptions.onBurstConfirmed): far more than an edit's few, far fewer than a first write's thousands. */
export const BURST_WRITES = 1000;

export interface KubeStatusWriterOptions {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly controllerName: string;
  /** The object as last observed in the cluster (the source's cache), or undefined when gone. */
  readonly observed: (apiVersion: string, kind: string, name: string, namespace?: string) => KubeObject | undefined;
  readonly isLeader: () => boolean;
  /**
   * The cluster copies observed() stopped returning as they were since the last call
   * (a KubeSource.trackReplaced() reader); undefined from it: unknown, compare everything. Given, a flush
   * looks only at statuses that are new objects or whose copy is in this list, instead of
   * looking up the copy of each of 11k statuses (~6–9 ms per flush); absent, it looks them all up.
   */
  readonly replaced?: () => readonly KubeObject[] | undefined;
  /** Adjusts the translator's statuses before they are kept and written (proxy ACK/NACK on Gateways). */
  readonly overlay?: (statuses: readonly ObjectStatus[]) => readonly ObjectStatus[];
  readonly retryDelayMs?: number;
  /** Default VERIFY_AFTER_WRITE_MS. */
  readonly verifyAfterWriteMs?: number;
  /**
   * Called once a burst of writes (at least `burstWrites` in one flush, default BURST_WRITES) is
   * confirmed: nothing left to write. Such a burst — the leader's first write, a resync, a change
   * every route sees — leaves ~50 MiB of request and watch-echo garbage in the serving thread's old
   * space that V8 does not give back on its own (the controller schedules its idle GC here).
   */
  readonly onBurstConfirmed?: () => void;
  readonly burstWrites?: number;
  readonly now?: () => Date;
}

export class KubeStatusWriter extends StatusWriter {
  readonly #options: KubeStatusWriterOptions;
  /**
   * Per status object written: the resourceVersion of the cluster's copy it was written against.
   * While the copy is still at that version the watch has not brought our write back yet, and the
   * status is not written again (nor its desired form computed). Keyed by identity and holding no
   * copy: keeping each written status as a clone until the cluster agreed was ~50 MiB of the
   * serving thread's old space during the leader's first write (11k statuses).
   */
  #written = new WeakMap<ObjectStatus, string | undefined>();
  /**
   * Per status object (current() keeps an unchanged status the same object): the cluster's copy
   * it was last found in step with, and that copy's resourceVersion (the source updates a copy
   * in place on a status-only change). While both hold nothing can differ, so a flush after a
   * route edit looks at the one or two statuses that changed, not at a JSON rendering of all 11k
   * (~75 ms of the serving thread per edit at 10k routes).
   */
  #inStep = new WeakMap<ObjectStatus, { readonly observed: KubeObject; readonly resourceVersion: string | undefined }>();
  /** The reverse of #inStep: a cluster copy → the status last found in step with it (to forget it when the copy is replaced). */
  #inStepWith = new WeakMap<KubeObject, ObjectStatus>();
  /** Further statuses found in step with one copy (two statuses of one object: rare), forgotten with it. */
  #alsoInStepWith = new WeakMap<KubeObject, ObjectStatus[]>();
  #translated: readonly ObjectStatus[] = [];
  readonly #kindsByApiVersion = new Map<string, Map<string, WatchedKind | undefined>>();
  /** update() was called since the statuses were last stamped (see update()). */
  #stale = false;
  #flushing: Promise<void> | undefined;
  #again = false;
  #retry: NodeJS.Timeout | undefined;
  #verify: NodeJS.Timeout | undefined;
  #closed = false;
  /** A burst of writes was sent and is not yet confirmed (see KubeStatusWriterOptions.onBurstConfirmed). */
  #burst = false;
  /** Count of status writes sent, for tests and metrics. */
  writes = 0;
  /** Count of statuses compared with the cluster's copy (the rest were known in step), for tests. */
  comparisons = 0;

  constructor(options: KubeStatusWriterOptions) {
    // Owned: the translator thread's statuses (structured clones) and the overlays' copies are read by nobody else.
    super(options.logger, options.now, true);
    this.#options = options;
  }

  /**
   * Takes the translator's statuses; they are overlaid and stamped when first read (current(), the
   * flush after this turn) — not here, where the controller calls it just before it checks and
   * publishes the config: the statuses are not on a route change's way to the proxies (~5–10 ms
   * per edit, ~0.3–0.6 s for the first 11k at start-up).
   */
  override update(statuses: readonly ObjectStatus[]): void {
    this.#translated = statuses;
    this.#stale = true;
    this.#kick();
  }

  override current(): readonly ObjectStatus[] {
    if (this.#stale) {
      this.#stale = false;
      const statuses = this.#translated;
      super.update(this.#options.overlay ? this.#options.overlay(statuses) : statuses);
    }
    return super.current();
  }

  /** Recomputes with the last translated statuses: what the overlay reads has changed. */
  refresh(): void {
    this.update(this.#translated);
  }

  /** After winning leadership: write whatever differs from the cluster. */
  resync(): void {
    this.#written = new WeakMap();
    this.#inStep = new WeakMap();
    this.#inStepWith = new WeakMap();
    this.#alsoInStepWith = new WeakMap();
    this.#kick();
  }

  /** Resolves once no write is pending (the current statuses are written or given up on). */
  async flushed(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearTimeout(this.#verify);
  }

  #kick(): void {
    if (this.#closed) return;
    if (this.#flushing) {
      this.#again = true;
      return;
    }
    // After the current turn: the config is published before thousands of statuses are compared.
    this.#flushing = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#flush()).finally(() => {
      this.#flushing = undefined;
      if (this.#again) {
        this.#again = false;
        this.#kick();
      }
    });
  }

  async #flush(): Promise<void> {
    // Read on every replica, so the log does not pile up on a follower (resync() clears what it could have told).
    const replaced = this.#forgetReplaced();
    // Stamped on every replica (the admin endpoint shows them), written by the leader only.
    const current = this.current();
    if (!this.#options.isLeader()) return;
    // Known which copies moved: a status still in step needs no look-up of its copy.
    const unchanged = replaced ? (status: ObjectStatus): boolean => this.#inStep.has(status) : (status: ObjectStatus): boolean => this.#unchanged(status);
    // A shared cursor, not queue.shift(): an array of 11k lives in large-object space, where V8
    // cannot left-trim, so every shift copied the rest of it (~7 ms per flush at 11k statuses).
    const queue = current;
    let cursor = 0;
    const writesBefore = this.writes;
    let retry = false;
    let sinceYield = 0;
    const worker = async (): Promise<void> => {
      for (let next = queue[cursor++]; next; next = queue[cursor++]) {
        // Leadership is asked before a comparison or write, not for each of the 11k statuses skipped.
        if (unchanged(next)) continue;
        if (this.#closed || !this.#options.isLeader()) return;
        if (!(await this.#write(next))) retry = true;
        // Unchanged objects never await: let the event loop (gRPC streams, probes) in now and then.
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (this.#closed) return;
    if (retry) {
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => this.#kick(), this.#options.retryDelayMs ?? 1000);
      this.#retry.unref();
    } else if (this.writes > writesBefore) {
      if (this.writes - writesBefore >= (this.#options.burstWrites ?? BURST_WRITES)) this.#burst = true;
      clearTimeout(this.#verify);
      this.#verify = setTimeout(() => this.#kick(), this.#options.verifyAfterWriteMs ?? VERIFY_AFTER_WRITE_MS);
      this.#verify.unref();
    } else if (this.#burst) {
      // The burst is confirmed (nothing left to write): its garbage can go once the thread is quiet.
      this.#burst = false;
      this.#options.onBurstConfirmed?.();
    }
  }

  /** Statuses in step with a replaced cluster copy are compared again; false when the source cannot say what was replaced. */
  #forgetReplaced(): boolean {
    const replaced = this.#options.replaced?.();
    if (replaced === undefined) return false;
    for (const copy of replaced) {
      const status = this.#inStepWith.get(copy);
      if (status === undefined) continue;
      this.#inStepWith.delete(copy);
      this.#inStep.delete(status);
      for (const other of this.#alsoInStepWith.get(copy) ?? []) this.#inStep.delete(other);
      this.#alsoInStepWith.delete(copy);
    }
    return true;
  }

  /** The same status object, found in step with the same copy of the object as now: nothing to compare. */
  #unchanged(computed: ObjectStatus): boolean {
    const seen = this.#inStep.get(computed);
    if (seen === undefined) return false;
    const observed = this.#observed(computed)?.observed;
    return seen.observed === observed && seen.resourceVersion === observed.metadata.resourceVersion;
  }

  #observed(computed: ObjectStatus): { watched: WatchedKind; observed: KubeObject } | undefined {
    const { apiVersion, kind, metadata } = computed;
    const watched = this.#watchedKind(apiVersion, kind);
    if (!watched?.hasStatus) return undefined;
    const observed = this.#options.observed(watched.apiVersion, kind, metadata.name, metadata.namespace);
    return observed ? { watched, observed } : undefined;
  }

  /** findWatchedKind by the apiVersion as written (a handful): no groupOf slice per status per flush. */
  #watchedKind(apiVersion: string, kind: string): WatchedKind | undefined {
    let kinds = this.#kindsByApiVersion.get(apiVersion);
    if (kinds === undefined) {
      kinds = new Map();
      // Bounded: statuses are of watched kinds, whose apiVersions are few; an odd one is looked up each time.
      if (this.#kindsByApiVersion.size < MAX_REMEMBERED_API_VERSIONS) this.#kindsByApiVersion.set(apiVersion, kinds);
    }
    if (kinds.has(kind)) return kinds.get(kind);
    const watched = findWatchedKind(groupOf(apiVersion), kind);
    if (kinds.size < MAX_REMEMBERED_API_VERSIONS) kinds.set(kind, watched);
    return watched;
  }

  /** Writes one object's status if it differs; false when it should be tried again later. */
  async #write(computed: ObjectStatus): Promise<boolean> {
    const { kind, metadata } = computed;
    const found = this.#observed(computed);
    if (!found) return true;
    this.comparisons++;
    const { watched, observed } = found;
    const resourceVersion = observed.metadata.resourceVersion;
    if (this.#written.has(computed) && this.#written.get(computed) === resourceVersion) return true;
    const desired = this.#desired(computed.status, observed);
    if (isDeepStrictEqual(desired, observed.status ?? {})) {
      this.#written.delete(computed);
      this.#inStep.set(computed, { observed, resourceVersion });
      const before = this.#inStepWith.get(observed);
      if (before !== undefined && before !== computed) {
        const others = this.#alsoInStepWith.get(observed);
        if (others) others.push(before);
        else this.#alsoInStepWith.set(observed, [before]);
      }
      this.#inStepWith.set(observed, computed);
      return true;
    }
    const body = {
      apiVersion: watched.apiVersion,
      kind,
      metadata: { name: metadata.name, ...(watched.namespaced ? { namespace: metadata.namespace ?? 'default' } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
      status: desired,
    };
    try {
      this.writes++;
      await this.#options.client.request('PATCH', objectPath(watched, metadata.name, metadata.namespace, 'status'), {
        query: { fieldManager: FIELD_MANAGER, force: 'true' },
        body,
        contentType: APPLY_PATCH,
        ignoreAnswer: true,
      });
      this.#written.set(computed, resourceVersion);
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return true;
      const conflict = err instanceof KubeApiError && err.statusCode === 409;
      this.#options.logger[conflict ? 'debug' : 'warn']({ kind, name: metadata.name, namespace: metadata.namespace, err: (err as Error).message }, conflict ? 'status write raced another change; retrying against the newer object' : 'status write failed; retrying');
      return false;
    }
  }

  /**
   * Our status, with lastTransitionTime taken from the cluster where the condition did not
   * change, and the other controllers' parents/ancestors entries kept.
   */
  #desired(computed: Record<string, unknown>, observed: KubeObject): Record<string, unknown> {
    const status = structuredClone(computed);
    const before = new Map<string, Condition>();
    if (observed.status) forEachCondition(observed.status, '', (c, path) => before.set(`${path}/${c.type}`, c));
    forEachCondition(status, '', (condition, path) => {
      const old = before.get(`${path}/${condition.type}`);
      if (old?.lastTransitionTime && old.status === condition.status && old.reason === condition.reason) condition.lastTransitionTime = old.lastTransitionTime;
    });
    const observedStatus = (observed.status ?? {}) as Record<string, unknown>;
    for (const list of ['parents', 'ancestors']) {
      const theirs = Array.isArray(observedStatus[list]) ? (observedStatus[list] as { controllerName?: string }[]).filter((e) => e.controllerName !== undefined && e.controllerName !== this.#options.controllerName) : [];
      if (theirs.length === 0) continue;
      status[list] = [...theirs, ...(Array.isArray(status[list]) ? status[list] as unknown[] : [])];
    }
    return status;
  }
}
