import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createLogger, moduleLogger } from '../../common/logger.ts';
import { RemoteConfigClient } from '../../distribute/remote/client.ts';
import { closeServer, listen } from '../../embedded/address.ts';
import { ProxyRuntime } from '../../proxy/runtime.ts';
import { parseProxyArgs, PROXY_HELP } from './proxy-args.ts';
import { MeshEnvError, meshSettings, registerMeshInfo, type MeshSettings } from './proxy-mesh.ts';
import { exitCodeOnSignal } from './on-signal.ts';
import { shutdownPlan } from './proxy-shutdown.ts';

/**
 * `switchboard proxy`: the data plane fed by a remote controller (src/distribute/remote/client.ts).
 * Resolves with the exit code once it has shut down (after a signal), or 1 when it cannot start.
 */
export async function proxyCommand(argv: readonly string[]): Promise<number> {
  const options = parseProxyArgs(argv);
  if (options === 'help') {
    process.stdout.write(PROXY_HELP);
    return 0;
  }
  const logger = createLogger({ level: options.logLevel, format: options.logFormat, ...(options.logFilter ? { filter: options.logFilter } : {}) });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Mesh settings (ProxyParameters mesh): checked and exposed; a malformed one stops the proxy.
  let mesh: MeshSettings | undefined;
  try {
    mesh = meshSettings(process.env);
  } catch (err) {
    if (!(err instanceof MeshEnvError)) throw err;
    logger.fatal({ err: err.message }, 'invalid mesh settings');
    return 1;
  }
  if (mesh) registerMeshInfo(registry, mesh);

  let caPem: string | undefined;
  try {
    caPem = options.caFile ? await readFile(options.caFile, 'utf8') : undefined;
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, 'cannot read --ca-file');
    return 1;
  }
  const runtime = new ProxyRuntime({ logger, registry, bindAddress: options.bindAddress });
  const client = new RemoteConfigClient({
    controller: options.controller,
    ...(caPem ? { caPem } : {}),
    ...(options.serverName ? { serverName: options.serverName } : {}),
    // Re-read on every connection: a projected token is rotated by the kubelet.
    token: async () => (await readFile(options.tokenFile, 'utf8')).trim(),
    namespace: options.namespace,
    gateways: options.gateways,
    proxyId: options.proxyId,
    runtime,
    logger: moduleLogger(logger, 'xds'),
    registry,
  });

  let draining = false;
  // Ready once a config serves, also while the controller is away (the last good config serves on).
  const isReady = (): boolean => !draining && client.current() !== undefined && runtime.ready();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/healthz/ready') return void res.writeHead(isReady() ? 200 : 503, { 'content-type': 'text/plain' }).end(isReady() ? 'ready\n' : 'not ready\n');
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('served here: /metrics, /healthz/ready\n');
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => {
        logger.error({ err }, 'collecting metrics failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('collecting metrics failed\n');
      },
    );
  });

  try {
    const bound = await listen(server, options.metricsAddress);
    logger.info({ controller: options.controller, namespace: options.namespace, gateways: options.gateways, proxyId: options.proxyId, metrics: `${bound.address}:${bound.port}`, ...(mesh ? { mesh } : {}) }, 'switchboard proxy starting');
  } catch (err) {
    logger.fatal({ err: (err as Error).message }, 'switchboard proxy could not start');
    return 1;
  }
  client.start();

  return exitCodeOnSignal(logger, async (signal) => {
    draining = true;
    // ProxyParameters shutdown (proxy-shutdown.ts): not ready now, accept for min, then drain.
    const plan = shutdownPlan(process.env);
    logger.info({ signal, ...plan }, 'shutting down: not ready, then draining in-flight requests');
    await new Promise((r) => setTimeout(r, plan.acceptForMs));
    await client.close();
    await runtime.close({ graceMs: plan.drainMs });
    await closeServer(server);
  });
}
