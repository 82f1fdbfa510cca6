import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from '../../common/logger.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import type { ApplyResult, Distributor } from '../types.ts';
import { isFromWorker, WORKER_SETTINGS_ENV, type FromWorker, type ToWorker, type WorkerSettings } from './messages.ts';

export interface ClusterDistributorOptions {
  readonly workers: number;
  /** The module each worker runs (it calls `runWorker`). */
  readonly workerModule: string;
  readonly settings: WorkerSettings;
  readonly logger: Logger;
  /** The primary's own metrics (control plane, process); aggregated with the workers'. */
  readonly registry: Registry;
  /** How long a publish waits for a worker's answer before counting it as failed. */
  readonly applyTimeoutMs?: number;
  /** First restart delay of a crashed worker; doubles per crash in a row, up to `maxRestartDelayMs`. */
  readonly restartDelayMs?: number;
  readonly maxRestartDelayMs?: number;
}

interface WorkerState {
  readonly worker: Worker;
  readonly slot: number;
  listening: boolean;
  /** Publishes waiting for this worker's answer, by version. */
  readonly pendingApplies: Map<string, (result: { errors: readonly string[] }) => void>;
}

/** A worker that stayed up this long is healthy again: its next crash restarts it quickly. */
const HEALTHY_UPTIME_MS = 10_000;
const METRICS_TIMEOUT_MS = 2_000;

/**
 * `--workers N` with N > 1: N proxy processes behind node:cluster, sharing the listening ports.
 * The primary keeps the control plane; each worker gets every new config over IPC, a new or
 * restarted worker gets the current one as soon as it says hello, and a crashed worker comes
 * back after a growing delay.
 */
export class ClusterDistributor implements Distributor {
  readonly #options: ClusterDistributorOptions;
  readonly #states = new Map<number, WorkerState>();
  readonly #crashesInARow: number[];
  readonly #metricsRequests = new Map<number, (metrics: readonly object[] | undefined) => void>();
  #nextRequestId = 0;
  #current: ProxyConfig | undefined;
  #closing = false;
  readonly #restartTimers = new Set<NodeJS.Timeout>();

  constructor(options: ClusterDistributorOptions) {
    this.#options = options;
    this.#crashesInARow = new Array<number>(options.workers).fill(0);
  }

  async start(): Promise<void> {
    cluster.setupPrimary({ exec: this.#options.workerModule, args: [] });
    for (let slot = 0; slot < this.#options.workers; slot++) this.#fork(slot);
  }

  async publish(config: ProxyConfig): Promise<ApplyResult> {
    this.#current = config;
    const answers = [...this.#states.values()].map((state) => this.#send(state, config));
    const errors = (await Promise.all(answers)).flat();
    return { version: config.version, errors };
  }

  isReady(): boolean {
    return [...this.#states.values()].some((s) => s.listening);
  }

  async metrics(): Promise<string> {
    const own = await this.#options.registry.getMetricsAsJSON();
    const fromWorkers = await Promise.all([...this.#states.values()].map((s) => this.#requestMetrics(s)));
    const all = [own, ...fromWorkers.filter((m): m is readonly object[] => m !== undefined)];
    return AggregatorRegistry.aggregate(all.map((m) => [...m])).metrics();
  }

  get metricsContentType(): string {
    return this.#options.registry.contentType;
  }

  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    for (const timer of this.#restartTimers) clearTimeout(timer);
    const exits = [...this.#states.values()].map(({ worker }) => new Promise<void>((resolve) => {
      if (worker.isDead()) return resolve();
      // A worker that does not finish draining in time is killed: shutdown must end.
      const killTimer = setTimeout(() => worker.process.kill('SIGKILL'), graceMs + 5_000);
      worker.once('exit', () => { clearTimeout(killTimer); resolve(); });
      this.#post(worker, { type: 'switchboard:shutdown', graceMs });
    }));
    await Promise.all(exits);
  }

  #fork(slot: number): void {
    const env = { [WORKER_SETTINGS_ENV]: JSON.stringify(this.#options.settings) };
    const worker = cluster.fork(env);
    const state: WorkerState = { worker, slot, listening: false, pendingApplies: new Map() };
    const startedAt = Date.now();
    this.#states.set(worker.id, state);
    worker.on('message', (message: unknown) => { if (isFromWorker(message)) this.#onMessage(state, message); });
    worker.on('error', (err) => this.#options.logger.warn({ worker: slot, err: err.message }, 'worker IPC error'));
    worker.on('exit', (code, signal) => {
      this.#states.delete(worker.id);
      for (const answer of state.pendingApplies.values()) answer({ errors: [`worker ${slot} exited before applying the config`] });
      if (this.#closing) return;
      this.#crashesInARow[slot] = Date.now() - startedAt >= HEALTHY_UPTIME_MS ? 1 : this.#crashesInARow[slot] + 1;
      const base = this.#options.restartDelayMs ?? 100;
      const delay = Math.min(base * 2 ** (this.#crashesInARow[slot] - 1), this.#options.maxRestartDelayMs ?? 10_000);
      this.#options.logger.error({ worker: slot, pid: worker.process.pid, code, signal, restartInMs: delay }, 'proxy worker died; restarting it');
      const timer = setTimeout(() => { this.#restartTimers.delete(timer); if (!this.#closing) this.#fork(slot); }, delay);
      this.#restartTimers.add(timer);
    });
  }

  #onMessage(state: WorkerState, message: FromWorker): void {
    switch (message.type) {
      case 'switchboard:hello':
        this.#options.logger.debug({ worker: state.slot, pid: state.worker.process.pid }, 'proxy worker started');
        if (this.#current) void this.#send(state, this.#current);
        return;
      case 'switchboard:applied': {
        state.listening = message.listening;
        const answer = state.pendingApplies.get(message.version);
        state.pendingApplies.delete(message.version);
        answer?.({ errors: message.errors });
        return;
      }
      case 'switchboard:metrics-response': {
        const answer = this.#metricsRequests.get(message.requestId);
        this.#metricsRequests.delete(message.requestId);
        answer?.(message.metrics);
      }
    }
  }

  /** Sends a config to one worker and resolves with its errors (never rejects). */
  #send(state: WorkerState, config: ProxyConfig): Promise<readonly string[]> {
    return new Promise((resolve) => {
      const timeoutMs = this.#options.applyTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        state.pendingApplies.delete(config.version);
        resolve([`worker ${state.slot} did not apply config ${config.version} within ${timeoutMs} ms`]);
      }, timeoutMs);
      // A later send of the same version (hello racing a publish) answers both callers.
      const earlier = state.pendingApplies.get(config.version);
      state.pendingApplies.set(config.version, ({ errors }) => {
        clearTimeout(timer);
        earlier?.({ errors });
        resolve(errors);
      });
      if (!this.#post(state.worker, { type: 'switchboard:config', config })) {
        state.pendingApplies.get(config.version)?.({ errors: [`worker ${state.slot} is not connected`] });
        state.pendingApplies.delete(config.version);
      }
    });
  }

  #requestMetrics(state: WorkerState): Promise<readonly object[] | undefined> {
    const requestId = this.#nextRequestId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#metricsRequests.delete(requestId); resolve(undefined); }, METRICS_TIMEOUT_MS);
      this.#metricsRequests.set(requestId, (metrics) => { clearTimeout(timer); resolve(metrics); });
      if (!this.#post(state.worker, { type: 'switchboard:metrics-request', requestId })) {
        clearTimeout(timer);
        this.#metricsRequests.delete(requestId);
        resolve(undefined);
      }
    });
  }

  #post(worker: Worker, message: ToWorker): boolean {
    if (!worker.isConnected()) return false;
    worker.send(message);
    return true;
  }
}
