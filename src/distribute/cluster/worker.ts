import { collectDefaultMetrics, Registry } from 'prom-client';
import { parseLogFilter, RUN_LOG_MODULES } from '../../common/log-filter.ts';
import { createLogger, setLoggedSecrets, type Logger } from '../../common/logger.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import type { ConfigRuntime } from '../types.ts';
import { isToWorker, WORKER_SETTINGS_ENV, type FromWorker, type WorkerSettings } from './messages.ts';

const DEFAULT_HEARTBEAT_MS = 1_000;

export type WorkerRuntimeFactory = (deps: { logger: Logger; registry: Registry }) => ConfigRuntime;

/**
 * The body of a cluster worker: one proxy runtime fed by the primary over IPC. Configs are
 * applied one at a time in arrival order; only the newest waiting one is applied when several
 * queue up behind a slow apply.
 */
export function runWorker(createRuntime: WorkerRuntimeFactory): void {
  const settings = JSON.parse(process.env[WORKER_SETTINGS_ENV] ?? '{"logLevel":"info","logFormat":"text"}') as WorkerSettings;
  const filter = settings.logFilter !== undefined ? parseLogFilter(settings.logFilter, RUN_LOG_MODULES) : undefined;
  const logger = createLogger({ level: settings.logLevel, format: settings.logFormat, ...(filter ? { filter } : {}) }).child({ worker: process.pid });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const runtime = createRuntime({ logger, registry });

  // The primary orchestrates shutdown. A Ctrl-C reaches the whole process group; dying on it here
  // would cut the requests the primary is about to drain.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});

  let waiting: { readonly config: ProxyConfig; readonly secretValues: readonly string[] } | undefined;
  /** The Secret values of the config being served: lines are scrubbed of them until it stops serving. */
  let servingSecretValues: readonly string[] = [];
  let applying = false;
  let shuttingDown = false;

  const applyLatest = async (): Promise<void> => {
    if (applying) return;
    applying = true;
    while (waiting && !shuttingDown) {
      const { config, secretValues } = waiting;
      waiting = undefined;
      // As in the embedded gateway: scrubbed of the new config's secrets before it is compiled (an
      // error may quote a key), and of the old one's until the new one serves.
      setLoggedSecrets([...secretValues, ...servingSecretValues]);
      let errors: string[];
      let listening = false;
      try {
        const result = await runtime.apply(config);
        errors = result.errors.map(describeError);
        listening = (await runtime.ready()) !== false;
      } catch (err) {
        errors = [`applying config ${config.version} failed: ${(err as Error).message}`];
        logger.error({ err }, 'applying config failed');
      }
      servingSecretValues = secretValues;
      setLoggedSecrets(secretValues);
      send({ type: 'switchboard:applied', version: config.version, errors, listening });
    }
    applying = false;
  };

  const shutdown = async (graceMs: number): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    try {
      await runtime.close({ graceMs });
    } finally {
      process.exit(0);
    }
  };

  process.on('message', (message: unknown) => {
    if (!isToWorker(message)) return;
    switch (message.type) {
      case 'switchboard:config':
        waiting = { config: message.config, secretValues: message.secretValues ?? [] };
        void applyLatest();
        return;
      case 'switchboard:metrics-request':
        void registry.getMetricsAsJSON().then((metrics) => send({ type: 'switchboard:metrics-response', requestId: message.requestId, metrics }));
        return;
      case 'switchboard:shutdown':
        void shutdown(message.graceMs);
    }
  });
  // Without a primary there is no one to take configs from or to drain for.
  process.on('disconnect', () => void shutdown(0));
  send({ type: 'switchboard:hello' });
  // A timer, not a thread: it fires only while the event loop turns, which is what the watchdog checks.
  setInterval(() => send({ type: 'switchboard:heartbeat' }), settings.heartbeatMs ?? DEFAULT_HEARTBEAT_MS).unref();
}

function send(message: FromWorker): void {
  if (process.connected) process.send?.(message);
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}
