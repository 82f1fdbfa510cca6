/**
 * `switchboard controller`: Kubernetes mode's control plane. The same loop as `run` (store →
 * translator thread → status + distribute, src/embedded/gateway.ts) with the cluster as the
 * source (KubeSource), status written back to the API server (KubeStatusWriter, leader only) and
 * the config served to remote proxies over gRPC (RemoteDistributor). Translation and serving run on
 * every replica; only the Lease holder writes status.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { IdleGc } from '../../common/idle-gc.ts';
import { createLogger, moduleLogger, type Logger } from '../../common/logger.ts';
import { KubeClient } from '../../controller/kube/client.ts';
import { KubeSource } from '../../controller/kube/kube-source.ts';
import { LeaderElector, type LeaderElectorOptions } from '../../controller/kube/leader-election.ts';
import { ProxyFeedback } from '../../controller/kube/proxy-feedback.ts';
import { provisionContext } from '../../controller/kube/provision/context.ts';
import { Provisioner, type ProvisionerOptions } from '../../controller/kube/provision/provisioner.ts';
import { SessionKeySecrets } from '../../controller/kube/session-keys.ts';
import { KubeStatusWriter } from '../../controller/kube/status-writer.ts';
import type { Authenticator } from '../../distribute/remote/auth.ts';
import { RemoteDistributor } from '../../distribute/remote/server.ts';
import { TokenReviewAuthenticator } from '../../distribute/remote/token-review.ts';
import { closeServer, listen } from '../../embedded/address.ts';
import { createAdminServer } from '../../embedded/admin-server.ts';
import { ControlPlaneMetrics } from '../../embedded/control-plane-metrics.ts';
import { EmbeddedGateway } from '../../embedded/gateway.ts';
import { createMetricsServer } from '../../embedded/metrics-server.ts';
import { TranslatorThread } from '../../embedded/translator-thread.ts';
import type { ControllerOptions } from './controller-args.ts';
import { ControllerFeed } from './controller-feed.ts';
import { exitCodeOnSignal } from './on-signal.ts';

/**
 * The translator thread's young generation. V8's default for a thread this size (~100 MiB live at
 * 10k routes) keeps tens of MiB of semi-spaces committed; an edit's translation allocates little
 * and keeps less, so a small one costs a few more scavenges and holds less memory (as the embedded
 * config thread does: src/embedded/config-thread.ts).
 */
const TRANSLATOR_YOUNG_GENERATION_MIB = 16;
/**
 * This long after a burst of status writes is confirmed (the leader's first write of 11k), the
 * serving thread's memory-reducing GC (opt-in: SWITCHBOARD_IDLE_GC=1, src/common/idle-gc.ts). The
 * GC stops this thread for ~0.2–0.6 s at 10k routes; an edit arriving during it waits for it.
 */
const MAIN_IDLE_GC_DELAY_MS = 2000;
/** How long proxies' streams may take to end after SIGINT/SIGTERM. */
const DRAIN_GRACE_MS = 5_000;

/** Seams for tests: a kubeconfig object instead of a file, a fixed authenticator, faster leases. */
export interface ControllerOverrides {
  readonly kubeConfig?: KubeConfig;
  readonly authenticator?: Authenticator;
  readonly logger?: Logger;
  readonly lease?: Partial<Pick<LeaderElectorOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>>;
  readonly provision?: Partial<Pick<ProvisionerOptions, 'controllerUrl' | 'defaultTag' | 'retryMs' | 'caSecret'>>;
}

export interface RunningController {
  readonly ports: { readonly health: number; readonly metrics: number; readonly admin: number; readonly xds: number };
  readonly gateway: EmbeddedGateway;
  readonly distributor: RemoteDistributor;
  readonly statusWriter: KubeStatusWriter;
  readonly provisioner: Provisioner;
  /** The translator thread (its heap, for bench/controller-heap.ts). */
  readonly translator: TranslatorThread;
  isLeader(): boolean;
  isReady(): boolean;
  /** Stops watching, releases the Lease, ends the proxies' streams and closes every server. */
  stop(): Promise<void>;
}

export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: pass --kubeconfig, set $KUBECONFIG, or run in a pod');
  return kc;
}

/** Starts everything; resolves once the first snapshot of the cluster is translated and served. */
export async function startController(options: ControllerOptions, overrides: ControllerOverrides = {}): Promise<RunningController> {
  const logger = overrides.logger ?? controllerLogger(options);
  const kc = overrides.kubeConfig ?? loadKubeConfig(options.kubeconfig);
  const client = new KubeClient(kc);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  // The status writer's bursts (the leader's first write of 11k statuses) leave garbage V8 keeps.
  const mainIdleGc = new IdleGc(MAIN_IDLE_GC_DELAY_MS);
  const source = new KubeSource({ client, logger: moduleLogger(logger, 'kube'), namespaceSelectors: options.namespaceSelectors, maxObjects: options.maxObjects });
  let elector: LeaderElector | undefined;
  const isLeader = (): boolean => elector?.isLeader() ?? true;
  // Gateways' Programmed condition follows what their proxies acknowledged or refused.
  const feedback = new ProxyFeedback(() => statusWriter.refresh());
  const statusWriter = new KubeStatusWriter({
    client, logger: moduleLogger(logger, 'status'), controllerName: options.controllerName, isLeader, observed: (...args) => source.observed(...args), replaced: source.trackReplaced(), overlay: (statuses) => provisioner.overlayStatus(feedback.overlay(statuses)),
    // Not cancelled by the edits that follow (they leave little): the burst's garbage goes 2 s after it.
    onBurstConfirmed: () => {
      mainIdleGc.busy();
      mainIdleGc.idle();
    },
  });
  // Each Gateway's MCP session-key Secret (leader only; never replaced once it exists).
  const provisionLogger = moduleLogger(logger, 'provision');
  const sessionKeys = new SessionKeySecrets({ client, logger: provisionLogger, controllerName: options.controllerName, isLeader });
  // Each Gateway's proxy workload from its ProxyParameters (leader only; docs/kubernetes.md "Provisioning").
  const provisioner = new Provisioner({
    client, logger: provisionLogger, controllerName: options.controllerName, isLeader, onStatusChange: () => statusWriter.refresh(),
    ...provisionContext({ xdsMode: options.xdsMode, xdsPort: options.xdsAddress.port, namespace: options.leaseNamespace }), ...overrides.provision,
  });
  if (options.leaderElection) {
    elector = new LeaderElector({
      client, logger: moduleLogger(logger, 'leader'), namespace: options.leaseNamespace, name: options.leaseName, identity: options.identity, ...overrides.lease,
      // A new leader writes whatever differs from the cluster (the previous leader may have stopped mid-way).
      onStartedLeading: () => {
        statusWriter.resync();
        sessionKeys.reconcile();
        provisioner.resync();
      },
    });
  }
  const xdsLogger = moduleLogger(logger, 'xds');
  const distributor = new RemoteDistributor({
    host: options.xdsAddress.host,
    port: options.xdsAddress.port,
    mode: options.xdsMode,
    ...(options.xdsTls ? { tls: options.xdsTls } : {}),
    authenticator: overrides.authenticator ?? new TokenReviewAuthenticator(kc),
    logger: xdsLogger,
    registry,
    onAck: (gateway, proxyId) => feedback.ack(gateway, proxyId),
    onNack: (gateway, proxyId, error) => {
      xdsLogger.warn({ gateway: `${gateway.namespace}/${gateway.name}`, proxyId, error }, 'a proxy refused its config and keeps serving its last good one');
      feedback.nack(gateway, proxyId, error);
    },
    onDisconnect: (gateway, proxyId) => feedback.disconnect(gateway, proxyId),
  });
  const translator = new TranslatorThread({ logger, youngGenerationMiB: TRANSLATOR_YOUNG_GENERATION_MIB });
  // Snapshots straight to the translator thread: a cluster needs none of the store's dedupe (controller-feed.ts).
  const feed = new ControllerFeed({
    source: provisioner.tap(sessionKeys.tap(source)), translate: translator.translate, logger, controllerName: options.controllerName, proxyModels: options.proxyModels,
  });
  const gateway = new EmbeddedGateway({
    feed, distributor, statusWriter, metrics: new ControlPlaneMetrics(registry), logger, controllerName: options.controllerName, proxyModels: options.proxyModels,
  });

  let draining = false;
  const isReady = (): boolean => !draining && gateway.isReady();
  const health = createHealthServer(isReady);
  const admin = createAdminServer({ config: () => gateway.config(), statuses: () => gateway.statuses(), isReady, secretPaths: () => gateway.secretPaths() });
  const metrics = createMetricsServer(distributor, logger);
  const closeServers = (): Promise<unknown> => Promise.all([closeServer(health), closeServer(admin), closeServer(metrics), translator.close()]);

  let bound: { health: AddressInfo; metrics: AddressInfo; admin: AddressInfo };
  try {
    bound = { health: await listen(health, options.healthAddress), metrics: await listen(metrics, options.metricsAddress), admin: await listen(admin, options.adminAddress) };
    // The translator thread loads its modules while the informers list the cluster.
    translator.prepare();
    // Campaign in the background: translation and serving do not wait for leadership.
    await elector?.start();
    await gateway.start();
  } catch (err) {
    await elector?.stop();
    statusWriter.close();
    mainIdleGc.stop();
    await Promise.allSettled([source.stop(), distributor.close(), closeServers()]);
    await client.close();
    throw err;
  }
  logger.info({
    health: `${bound.health.address}:${bound.health.port}`, metrics: `${bound.metrics.address}:${bound.metrics.port}`, admin: `${bound.admin.address}:${bound.admin.port}`,
    xds: distributor.port, xdsMode: options.xdsMode, leader: isLeader(), identity: options.identity,
  }, 'switchboard controller ready');

  return {
    ports: { health: bound.health.port, metrics: bound.metrics.port, admin: bound.admin.port, xds: distributor.port ?? 0 },
    gateway,
    distributor,
    statusWriter,
    provisioner,
    translator,
    isLeader,
    isReady,
    async stop() {
      draining = true;
      await gateway.stop(DRAIN_GRACE_MS);
      statusWriter.close();
      mainIdleGc.stop();
      await elector?.stop();
      await closeServers();
      // After the Lease release above: that is its last request.
      await client.close();
    },
  };
}

/** `switchboard controller`: resolves with the exit code after a signal, or 1 when it cannot start. */
export async function controller(options: ControllerOptions): Promise<number> {
  const logger = controllerLogger(options);
  let running: RunningController;
  try {
    running = await startController(options, { logger });
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, 'switchboard controller could not start');
    return 1;
  }
  return exitCodeOnSignal(logger, async (signal) => {
    logger.info({ signal }, 'shutting down: releasing the leader Lease and ending proxy streams');
    await running.stop();
  });
}

/** The process's logger: `--log-level`, `--log-format` and the per-module levels of `--log-filter`. */
function controllerLogger(options: ControllerOptions): Logger {
  return createLogger({ level: options.logLevel, format: options.logFormat, ...(options.logFilter ? { filter: options.logFilter } : {}) });
}

/** Kubelet probes: `/healthz/ready` (first config served, not draining) and `/healthz/live`. */
function createHealthServer(isReady: () => boolean): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const text = (status: number, body: string): void => void res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(body);
    if (path === '/healthz/live') return text(200, 'ok\n');
    if (path === '/healthz/ready') return isReady() ? text(200, 'ready\n') : text(503, 'not ready\n');
    return text(404, 'health endpoints: /healthz/ready, /healthz/live\n');
  });
}
