import { fileURLToPath } from 'node:url';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Logger } from '../../common/logger.ts';
import { ClusterDistributor } from '../../distribute/cluster/primary.ts';
import { InProcessDistributor } from '../../distribute/in-process.ts';
import { createProxyRuntime } from '../../distribute/proxy-runtime.ts';
import type { Distributor } from '../../distribute/types.ts';
import { closeServer, listen } from '../../embedded/address.ts';
import { createAdminServer } from '../../embedded/admin-server.ts';
import type { ConfigThread } from '../../embedded/config-thread.ts';
import { ControlPlaneMetrics } from '../../embedded/control-plane-metrics.ts';
import { EmbeddedGateway } from '../../embedded/gateway.ts';
import { createMetricsServer } from '../../embedded/metrics-server.ts';
import { StatusWriter } from '../../embedded/status-writer.ts';
import type { RunOptions } from '../args.ts';
import { exitCodeOnSignal } from './on-signal.ts';
import { workerEntry } from '../../common/entry-points.ts';

/** How long in-flight requests may take to finish after SIGINT/SIGTERM. */
const DRAIN_GRACE_MS = 10_000;
const WORKER_MODULE = fileURLToPath(workerEntry(new URL('../../distribute/cluster/proxy-worker.ts', import.meta.url)));

/**
 * The embedded gateway's serving side (run.ts loads it once the config thread is under way):
 * resolves with the exit code once it has shut down (after a signal), or 1 when it cannot start.
 */
export async function serveEmbedded(options: RunOptions, logger: Logger, configThread: ConfigThread): Promise<number> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // One worker: the proxy runtime is in this process, and the admin API can show its provider health.
  const runtime = options.workers === 1 ? createProxyRuntime({ logger, registry }) : undefined;
  const distributor = runtime ? new InProcessDistributor(runtime, registry) : createDistributor(options, logger, registry);
  const gateway = new EmbeddedGateway({
    feed: configThread,
    distributor,
    statusWriter: new StatusWriter(logger),
    metrics: new ControlPlaneMetrics(registry),
    logger,
    proxyModels: options.proxyModels,
  });

  let draining = false;
  // Not ready while draining, so a load balancer stops sending before the listeners close.
  const admin = createAdminServer({ config: () => gateway.config(), statuses: () => gateway.currentStatuses(), isReady: () => !draining && gateway.isReady(), secretPaths: () => gateway.secretPaths(), ...(runtime?.providerHealth ? { providerHealth: () => runtime.providerHealth?.() } : {}) });
  const metrics = createMetricsServer(distributor, logger);
  const closeServers = (): Promise<unknown> => Promise.all([closeServer(admin), closeServer(metrics), configThread.stop()]);

  try {
    const adminBound = await listen(admin, options.adminAddress);
    const metricsBound = await listen(metrics, options.metricsAddress);
    logger.info({ admin: `${adminBound.address}:${adminBound.port}`, metrics: `${metricsBound.address}:${metricsBound.port}`, workers: options.workers, files: options.files }, 'switchboard starting');
    await gateway.start();
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, 'switchboard could not start');
    await Promise.all([closeServers(), distributor.close(0)]);
    return 1;
  }

  return exitCodeOnSignal(logger, async (signal) => {
    draining = true;
    logger.info({ signal, graceMs: DRAIN_GRACE_MS }, 'shutting down: draining in-flight requests');
    await gateway.stop(DRAIN_GRACE_MS);
    await closeServers();
  });
}

function createDistributor(options: RunOptions, logger: Logger, registry: Registry): Distributor {
  if (options.workers === 1) return new InProcessDistributor(createProxyRuntime({ logger, registry }), registry);
  return new ClusterDistributor({
    workers: options.workers,
    workerModule: WORKER_MODULE,
    // Workers run the backend handlers (mcp, llm, forward): they get the filter and parse it again.
    settings: { logLevel: options.logLevel, logFormat: options.logFormat, ...(options.logFilterText !== undefined ? { logFilter: options.logFilterText } : {}) },
    logger,
    registry,
    stallTimeoutMs: options.workerStallTimeoutMs,
  });
}
