/**
 * The controller's config feed (a ConfigFeed, src/embedded/gateway.ts): the cluster's snapshots
 * go straight to the translator thread, without the ObjectStore the file source needs.
 *
 * Why not the store: it dedupes by kind/namespace/name (two files may declare one object) and
 * locates objects by file — neither applies to a cluster, where the API server keeps one object
 * per name and kind. Deduping 11k objects on every edit cost ~15–18 ms of the serving thread in
 * the controller's profile (bench/RESULTS.md "Session 7: controller edit path").
 *
 * Snapshots are complete: while one is being translated, later ones replace each other and only
 * the newest is translated next. A snapshot's delta (KubeSource's, from the one before it) goes to
 * the translator thread with it, unless a snapshot in between was skipped that way (then the
 * thread diffs by identity, as for any snapshot without one).
 */
import type { KubeObject } from '../../api/gateway/object.ts';
import type { Logger } from '../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../../controller/sources/types.ts';
import { kubeDelta } from '../../controller/kube/kube-source.ts';
import type { ObjectDelta } from '../../controller/translate/object-delta.ts';
import type { ConfigFeed, FedTranslation, TranslateFn } from '../../embedded/gateway.ts';

export interface ControllerFeedOptions {
  readonly source: ObjectSource;
  /** The TranslatorThread's translate: `delta`, when given, turns the previous call's objects into `objects`. */
  readonly translate: (objects: readonly KubeObject[], options: { controllerName?: string; proxyModels?: boolean }, delta?: ObjectDelta) => ReturnType<TranslateFn>;
  readonly logger: Logger;
  readonly controllerName?: string;
  /** The experimental ProxyModel API (`--enable-proxy-models`, docs/models.md). */
  readonly proxyModels?: boolean;
}

export class ControllerFeed implements ConfigFeed {
  readonly #options: ControllerFeedOptions;
  readonly #translateOptions: { controllerName?: string; proxyModels?: boolean };
  #deliver: ((result: FedTranslation | Error) => void) | undefined;
  #waiting: SourceSnapshot | undefined;
  /** A snapshot was replaced before it was translated: the next one's delta is not from the last translated one. */
  #skipped = false;
  #loop: Promise<void> | undefined;
  readonly #loggedModels = new Set<string>();

  constructor(options: ControllerFeedOptions) {
    this.#options = options;
    this.#translateOptions = { ...(options.controllerName ? { controllerName: options.controllerName } : {}), ...(options.proxyModels ? { proxyModels: true } : {}) };
  }

  async start(deliver: (result: FedTranslation | Error) => void): Promise<void> {
    this.#deliver = deliver;
    await this.#options.source.start((snapshot) => this.#enqueue(snapshot));
    // The source delivered its first snapshot during start(): resolve once it is translated.
    await this.#loop;
  }

  async stop(): Promise<void> {
    await this.#options.source.stop();
    this.#waiting = undefined;
    await this.#loop;
  }

  #enqueue(snapshot: SourceSnapshot): void {
    if (this.#waiting) this.#skipped = true;
    this.#waiting = snapshot;
    this.#loop ??= this.#drain().finally(() => { this.#loop = undefined; });
  }

  async #drain(): Promise<void> {
    while (this.#waiting) {
      const snapshot = this.#waiting;
      this.#waiting = undefined;
      const delta = this.#skipped ? undefined : kubeDelta(snapshot);
      this.#skipped = false;
      const objects = snapshot.objects.map((s) => s.object);
      this.#logIgnoredModels(objects);
      let result: FedTranslation | Error;
      try {
        // translate() never throws for a user's mistake; a throw is a bug or the translator thread
        // giving up past a limit: the gateway logs it and keeps serving the previous config.
        const translation = await this.#options.translate(objects, this.#translateOptions, delta);
        const errors = snapshot.problems.filter((p) => p.severity === 'error').length;
        result = { ...translation, problems: snapshot.problems, sourceErrors: errors };
      } catch (err) {
        // Whether the thread took this delta is unknown: the next snapshot is diffed whole.
        this.#skipped = true;
        result = err instanceof Error ? err : new Error(String(err));
      }
      this.#deliver?.(result);
    }
  }

  /**
   * ProxyModel is experimental and off unless enabled: say so once per object instead of
   * dropping it silently (as the embedded gateway does for its store).
   */
  #logIgnoredModels(objects: readonly KubeObject[]): void {
    if (this.#options.proxyModels) return;
    for (const object of objects) {
      if (object.kind !== 'ProxyModel') continue;
      const id = `${object.kind}/${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;
      if (this.#loggedModels.has(id)) continue;
      this.#loggedModels.add(id);
      this.#options.logger.warn({ object: id }, 'ProxyModel objects are experimental and off (enable with --enable-proxy-models); object ignored');
    }
  }
}
