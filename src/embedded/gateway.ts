import type { KubeObject, ObjectStatus } from '../api/gateway/object.ts';
import { setLoggedSecrets, type Logger } from '../common/logger.ts';
import { validateConfig } from '../ir/validate.ts';
import { recordSize } from '../ir/config-delta.ts';
import type { ConfigProblem, ObjectSource, SourceSnapshot } from '../controller/sources/types.ts';
import { ObjectStore } from '../controller/store/store.ts';
import type { Distributor } from '../distribute/types.ts';
import type { ProxyConfig } from '../ir/types.ts';
import type { ControlPlaneMetrics } from './control-plane-metrics.ts';
import type { StatusWriter } from './status-writer.ts';

/** What the gateway uses of translate()'s result (src/controller/translate/index.ts). */
export interface Translation {
  readonly config: ProxyConfig;
  readonly statuses: ObjectStatus[];
  /** JSON Pointers of the IR locations that hold Secret data: /config_dump redacts them. */
  readonly secretPaths?: readonly string[];
  /** Every Secret-derived value: log lines (this process's and the proxies') are scrubbed of them. */
  readonly secretValues?: readonly string[];
}

/**
 * The translator, injected: the CLI runs it in a worker thread (translator-thread.ts) so a large
 * config never blocks the serving event loop; tests may pass translate() itself or a double.
 */
export type TranslateFn = (objects: readonly KubeObject[], options?: { controllerName?: string; proxyModels?: boolean }) => Translation | Promise<Translation>;

/**
 * A translation with what the source reported about the objects it came from. Its statuses are
 * absent when the feed writes them itself (the config thread keeps the status writer: ConfigFeed.statuses).
 */
export interface FedTranslation extends Omit<Translation, 'statuses'> {
  readonly statuses?: ObjectStatus[];
  readonly problems: readonly ConfigProblem[];
  /** How many of `problems` are errors (the control-plane metric). */
  readonly sourceErrors: number;
}

/**
 * A source and translator in one (the CLI's ConfigThread, config-thread.ts): it delivers
 * translations, or an Error when a reload failed, and keeps the objects itself.
 */
export interface ConfigFeed {
  /** Resolves after the first translation (or failure) was delivered; rejects when the source cannot start at all. */
  start(deliver: (result: FedTranslation | Error) => void): Promise<void>;
  stop(): Promise<void>;
  /** The statuses as written, when the feed delivers translations without them. */
  statuses?(): Promise<readonly ObjectStatus[]>;
}

/** Either a source whose snapshots are stored and translated here, or a feed that does both elsewhere. */
export type EmbeddedGatewayOptions = EmbeddedGatewayCommonOptions & (
  | { readonly source: ObjectSource; readonly translate: TranslateFn; readonly feed?: undefined }
  | { readonly feed: ConfigFeed; readonly source?: undefined; readonly translate?: undefined }
);

interface EmbeddedGatewayCommonOptions {
  readonly distributor: Distributor;
  readonly statusWriter: StatusWriter;
  readonly metrics: ControlPlaneMetrics;
  readonly logger: Logger;
  readonly controllerName?: string;
  /** The experimental ProxyModel API (`run --enable-proxy-models`, docs/models.md). */
  readonly proxyModels?: boolean;
}

/**
 * The embedded control loop: source → store → translate → status + distribute. Snapshots are
 * processed one at a time; when several arrive during a slow apply only the newest is processed
 * (each snapshot is complete, so skipping the ones in between loses nothing).
 */
export class EmbeddedGateway {
  readonly #options: EmbeddedGatewayOptions;
  readonly #store = new ObjectStore();
  #current: ProxyConfig | undefined;
  #currentSecretPaths: readonly string[] = [];
  #currentSecretValues: readonly string[] = [];
  #waiting: SourceSnapshot | FedTranslation | Error | undefined;
  /** The feed's problems (a source's are in the store). */
  #feedProblems: readonly ConfigProblem[] = [];
  #loop: Promise<void> | undefined;
  #reportedDuplicates = new Set<string>();
  readonly #loggedModels = new Set<string>();

  constructor(options: EmbeddedGatewayOptions) {
    this.#options = options;
  }

  /** Starts the source and resolves once its first snapshot is translated and distributed. */
  async start(): Promise<void> {
    await this.#options.distributor.start();
    if (this.#options.feed) await this.#options.feed.start((result) => this.#enqueue(result));
    else await this.#options.source.start((snapshot) => this.#enqueue(snapshot));
    await this.#loop;
  }

  /** The config being served, or undefined before the first one is applied. */
  config(): ProxyConfig | undefined {
    return this.#current;
  }

  /** The statuses written here (a source's; a feed's that delivers them). */
  statuses(): readonly ObjectStatus[] {
    return this.#options.statusWriter.current();
  }

  /** The current statuses wherever they are written (the admin endpoint's view). */
  async currentStatuses(): Promise<readonly ObjectStatus[]> {
    return this.#options.feed?.statuses ? this.#options.feed.statuses() : this.#options.statusWriter.current();
  }

  problems(): readonly ConfigProblem[] {
    return this.#options.feed ? this.#feedProblems : this.#store.problems();
  }

  isReady(): boolean {
    return this.#current !== undefined && this.#options.distributor.isReady();
  }

  /** Where the config being served holds Secret data (JSON Pointers, from the translator): /config_dump redacts them. */
  secretPaths(): readonly string[] {
    return this.#currentSecretPaths;
  }

  /** Stops watching, then drains the proxies for up to `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    await (this.#options.feed ?? this.#options.source).stop();
    this.#waiting = undefined;
    await this.#loop;
    await this.#options.distributor.close(graceMs);
  }

  #enqueue(next: SourceSnapshot | FedTranslation | Error): void {
    // Each is complete (a snapshot, or a whole translation), so only the newest matters.
    this.#waiting = next;
    this.#loop ??= this.#drain().finally(() => { this.#loop = undefined; });
  }

  async #drain(): Promise<void> {
    while (this.#waiting) {
      const next = this.#waiting;
      this.#waiting = undefined;
      try {
        if (next instanceof Error) throw next;
        if ('config' in next) {
          this.#feedProblems = next.problems;
          this.#options.metrics.sourceErrors(next.sourceErrors);
          await this.#apply(next, next.sourceErrors);
        } else await this.#reload(next);
      } catch (err) {
        this.#options.metrics.reloaded('error');
        this.#options.logger.error({ err }, 'reload failed; still serving the previous config');
      }
    }
  }

  /**
   * ProxyModel is experimental (SPEC.md: gated by proxyModels.enabled). With the API off, each
   * object's status says `Accepted=False` (translate/proxy-model-status.ts); the log says it once
   * per object as well, for whoever reads the log rather than the status.
   */
  #logIgnoredModels(): void {
    for (const object of this.#store.objects()) {
      if (this.#options.proxyModels || (object.kind !== 'ProxyModel' && object.kind !== 'ProxyModelList')) continue;
      const id = `${object.kind}/${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;
      if (this.#loggedModels.has(id)) continue;
      this.#loggedModels.add(id);
      this.#options.logger.warn({ object: id }, 'ProxyModel objects are experimental and off (enable with --enable-proxy-models); object ignored');
    }
  }

  async #reload(snapshot: SourceSnapshot): Promise<void> {
    if (!this.#options.translate) return;
    const duplicates = this.#store.replace(snapshot);
    this.#logNewDuplicates(duplicates);
    this.#logIgnoredModels();
    const sourceErrors = this.#store.problems().filter((p) => p.severity === 'error').length;
    this.#options.metrics.sourceErrors(sourceErrors);

    // translate() never throws for a user's mistake; a throw is a bug, and a translator thread
    // gives up on a translation over its time or memory limit: either way the caller keeps the old config.
    await this.#apply(await this.#options.translate(this.#store.objects(), this.#controllerNameOption()), sourceErrors);
  }

  /** Statuses, then (when the version changed) check and distribute the config. */
  async #apply(translation: Translation | FedTranslation, sourceErrors: number): Promise<void> {
    const { logger, metrics, distributor } = this.#options;
    const { config, statuses, secretPaths = [], secretValues = [] } = translation;
    if (statuses) this.#options.statusWriter.update(statuses);

    let applyErrors = 0;
    if (config.version !== this.#current?.version) {
      // An IR the proxy could not rely on is a translator bug: keep serving the previous config.
      // The config being served passed this check: its unchanged Routes and Backends are not walked again.
      const problems = validateConfig(config, this.#current);
      if (problems.length > 0) {
        logger.error({ version: config.version, count: problems.length, problems: problems.slice(0, 20) }, 'translator produced an invalid config (a bug); still serving the previous config');
        metrics.reloaded('error');
        return;
      }
      // Log lines are scrubbed of the new config's secrets before the proxies compile it (their
      // errors may quote a key), and of the old one's until it stops serving.
      setLoggedSecrets([...secretValues, ...this.#currentSecretValues]);
      const result = await distributor.publish(config, secretValues);
      this.#current = config;
      this.#currentSecretPaths = secretPaths;
      this.#currentSecretValues = secretValues;
      setLoggedSecrets(secretValues);
      metrics.servingVersion(config.version);
      applyErrors = result.errors.length;
      for (const error of result.errors) logger.error({ version: config.version, error }, 'part of the config could not be applied');
      logger.info({ version: config.version, binds: config.binds.map((b) => b.port), routes: recordSize(config.routes), backends: recordSize(config.backends) }, 'config applied');
    }
    metrics.reloaded(sourceErrors === 0 && applyErrors === 0 ? 'success' : 'error');
  }

  #controllerNameOption(): { controllerName?: string; proxyModels?: boolean } {
    return { ...(this.#options.controllerName ? { controllerName: this.#options.controllerName } : {}), ...(this.#options.proxyModels ? { proxyModels: true } : {}) };
  }

  /** Duplicates are logged when they appear, not again on every reload while they stay. */
  #logNewDuplicates(duplicates: readonly ConfigProblem[]): void {
    const now = new Set(duplicates.map((d) => d.message));
    for (const duplicate of duplicates) {
      if (this.#reportedDuplicates.has(duplicate.message)) continue;
      this.#options.logger.error({ file: duplicate.file, document: duplicate.document, line: duplicate.line }, duplicate.message);
    }
    this.#reportedDuplicates = now;
  }
}
