import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, type Registry } from 'prom-client';
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
  /**
   * The watchdog: a worker whose event loop sends no heartbeat for this long is killed and
   * restarted like a crashed one. 0 turns the watchdog off.
   */
  readonly stallTimeoutMs?: number;
}

export const DEFAULT_STALL_TIMEOUT_MS = 10_000;

interface WorkerState {
  readonly worker: Worker;
  readonly slot: number;
  listening: boolean;
  /** When the worker's event loop was last heard from (its hello or a heartbeat); 0 before hello. */
  lastHeartbeatAt: number;
  /** Killed by the watchdog: its exit is counted as a stall, not a crash. */
  stalled: boolean;
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
  #current: { readonly config: ProxyConfig; readonly secretValues: readonly string[] } | undefined;
  #closing = false;
  readonly #restartTimers = new Set<NodeJS.Timeout>();
  readonly #restarts: Counter<'reason'>;
  #watchdog: NodeJS.Timeout | undefined;
  #lastWatchdogCheckAt = 0;

  constructor(options: ClusterDistributorOptions) {
    this.#options = options;
    this.#crashesInARow = new Array<number>(options.workers).fill(0);
    this.#restarts = new Counter({ name: 'switchboard_worker_restarts_total', help: 'Proxy workers restarted by the primary, by reason: crashed (the process exited) or stalled (its event loop sent no heartbeat within the stall timeout).', labelNames: ['reason'], registers: [options.registry] });
    this.#restarts.inc({ reason: 'crashed' }, 0);
    this.#restarts.inc({ reason: 'stalled' }, 0);
  }

  async start(): Promise<void> {
    cluster.setupPrimary({ exec: this.#options.workerModule, args: [] });
    for (let slot = 0; slot < this.#options.workers; slot++) this.#fork(slot);
    const stallTimeoutMs = this.#stallTimeoutMs();
    if (stallTimeoutMs > 0) {
      this.#lastWatchdogCheckAt = Date.now();
      this.#watchdog = setInterval(() => this.#checkHeartbeats(stallTimeoutMs), heartbeatInterval(stallTimeoutMs));
      this.#watchdog.unref();
    }
  }

  async publish(config: ProxyConfig, secretValues: readonly string[] = []): Promise<ApplyResult> {
    this.#current = { config, secretValues };
    const answers = [...this.#states.values()].map((state) => this.#send(state, this.#current!));
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
    clearInterval(this.#watchdog);
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
    const stallTimeoutMs = this.#stallTimeoutMs();
    const settings = { ...this.#options.settings, heartbeatMs: stallTimeoutMs > 0 ? heartbeatInterval(stallTimeoutMs) : undefined };
    const env = { [WORKER_SETTINGS_ENV]: JSON.stringify(settings) };
    const worker = cluster.fork(env);
    const state: WorkerState = { worker, slot, listening: false, lastHeartbeatAt: 0, stalled: false, pendingApplies: new Map() };
    const startedAt = Date.now();
    this.#states.set(worker.id, state);
    worker.on('message', (message: unknown) => { if (isFromWorker(message)) this.#onMessage(state, message); });
    worker.on('error', (err) => this.#options.logger.warn({ worker: slot, err: err.message }, 'worker IPC error'));
    worker.on('exit', (code, signal) => {
      this.#states.delete(worker.id);
      for (const answer of state.pendingApplies.values()) answer({ errors: [`worker ${slot} exited before applying the config`] });
      if (this.#closing) return;
      this.#restarts.inc({ reason: state.stalled ? 'stalled' : 'crashed' });
      this.#crashesInARow[slot] = Date.now() - startedAt >= HEALTHY_UPTIME_MS ? 1 : this.#crashesInARow[slot] + 1;
      const base = this.#options.restartDelayMs ?? 100;
      const delay = Math.min(base * 2 ** (this.#crashesInARow[slot] - 1), this.#options.maxRestartDelayMs ?? 10_000);
      if (!state.stalled) this.#options.logger.error({ worker: slot, pid: worker.process.pid, code, signal, restartInMs: delay }, 'proxy worker died; restarting it');
      const timer = setTimeout(() => { this.#restartTimers.delete(timer); if (!this.#closing) this.#fork(slot); }, delay);
      this.#restartTimers.add(timer);
    });
  }

  #onMessage(state: WorkerState, message: FromWorker): void {
    switch (message.type) {
      case 'switchboard:heartbeat':
        state.lastHeartbeatAt = Date.now();
        return;
      case 'switchboard:hello':
        state.lastHeartbeatAt = Date.now();
        this.#options.logger.debug({ worker: state.slot, pid: state.worker.process.pid }, 'proxy worker started');
        // A new or restarted worker gets the Secret values with the config, before it compiles it.
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

  #stallTimeoutMs(): number {
    return this.#options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
  }

  /**
   * Kills every worker whose event loop has been silent past the timeout; its exit then takes the
   * ordinary restart path. A worker still starting (no hello yet) is not judged: loading the proxy
   * can take seconds on a busy machine, and a worker that never starts is a crash, not a stall.
   */
  #checkHeartbeats(stallTimeoutMs: number): void {
    const now = Date.now();
    const primaryWasBusy = now - this.#lastWatchdogCheckAt > stallTimeoutMs / 2;
    this.#lastWatchdogCheckAt = now;
    if (primaryWasBusy) {
      // This thread did not read its IPC either: the heartbeats are waiting unread, and judging
      // the workers now would kill every healthy one. Start their clocks over instead.
      for (const state of this.#states.values()) if (state.lastHeartbeatAt !== 0) state.lastHeartbeatAt = now;
      return;
    }
    for (const state of this.#states.values()) {
      if (state.stalled || state.lastHeartbeatAt === 0 || now - state.lastHeartbeatAt <= stallTimeoutMs) continue;
      state.stalled = true;
      this.#options.logger.error({ worker: state.slot, pid: state.worker.process.pid, silentForMs: now - state.lastHeartbeatAt, stallTimeoutMs }, 'proxy worker event loop stalled; killing and restarting it');
      // SIGKILL: a stuck event loop cannot run a SIGTERM handler, and a stopped process ignores anything else.
      state.worker.process.kill('SIGKILL');
    }
  }

  /** Sends a config (and its Secret values) to one worker and resolves with its errors (never rejects). */
  #send(state: WorkerState, { config, secretValues }: { readonly config: ProxyConfig; readonly secretValues: readonly string[] }): Promise<readonly string[]> {
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
      if (!this.#post(state.worker, { type: 'switchboard:config', config, secretValues })) {
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

/** Several heartbeats per timeout, so one late timer (a GC pause, a busy machine) is not a stall. */
function heartbeatInterval(stallTimeoutMs: number): number {
  return Math.max(20, Math.min(1_000, Math.floor(stallTimeoutMs / 4)));
}
