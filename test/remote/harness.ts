/**
 * The two halves of Kubernetes-mode config distribution without Kubernetes: a controller made of
 * the embedded control loop (a folder of YAML → FileSource → translate) publishing through a real
 * RemoteDistributor, and real `switchboard proxy` child processes connecting to it. Tokens are
 * checked by a StaticTokenAuthenticator (TokenReview needs an API server).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/common/logger.ts';
import { FileSource } from '../../src/controller/sources/file/file-source.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { StaticTokenAuthenticator } from '../../src/distribute/remote/auth.ts';
import { RemoteDistributor } from '../../src/distribute/remote/server.ts';
import type { GatewayRef } from '../../src/distribute/remote/split.ts';
import type { ServerTls, TransportMode } from '../../src/distribute/remote/transport.ts';
import { ControlPlaneMetrics } from '../../src/embedded/control-plane-metrics.ts';
import { EmbeddedGateway } from '../../src/embedded/gateway.ts';
import { StatusWriter } from '../../src/embedded/status-writer.ts';
import { CLI, freePort, REPO_ROOT } from '../cli/harness.ts';

/** Tokens the test controller accepts, and whose they are. */
export const TOKENS = {
  'token-default': 'system:serviceaccount:default:proxy',
  'token-other': 'system:serviceaccount:other:proxy',
} as const;

export interface ControllerEvents {
  readonly acks: { gateway: GatewayRef; proxyId: string; version: string }[];
  readonly nacks: { gateway: GatewayRef; proxyId: string; error: string }[];
}

export interface TestController {
  readonly port: number;
  readonly distributor: RemoteDistributor;
  readonly events: ControllerEvents;
  stop(): Promise<void>;
}

export async function startController(dir: string, opts: { port?: number; mode?: TransportMode; tls?: ServerTls } = {}): Promise<TestController> {
  const logger = createLogger({ level: 'silent' });
  const registry = new Registry();
  const events: ControllerEvents = { acks: [], nacks: [] };
  const distributor = new RemoteDistributor({
    host: '127.0.0.1', port: opts.port ?? 0, mode: opts.mode ?? 'plaintext', ...(opts.tls ? { tls: opts.tls } : {}),
    authenticator: new StaticTokenAuthenticator(TOKENS), logger, registry,
    onAck: (gateway, proxyId, { version }) => events.acks.push({ gateway, proxyId, version }),
    onNack: (gateway, proxyId, error) => events.nacks.push({ gateway, proxyId, error }),
  });
  const gateway = new EmbeddedGateway({
    source: new FileSource({ paths: [dir], logger }),
    translate,
    distributor,
    statusWriter: new StatusWriter(logger),
    metrics: new ControlPlaneMetrics(registry),
    logger,
  });
  await gateway.start();
  return { port: distributor.port as number, distributor, events, stop: () => gateway.stop(1_000) };
}

export interface ProxyProcess {
  readonly metricsPort: number;
  isReady(): Promise<boolean>;
  metrics(): Promise<string>;
  output(): string;
  stop(): Promise<number | null>;
}

export async function startProxy(opts: {
  controller: string; tokenFile: string; namespace?: string; gateway?: string; proxyId?: string; caFile?: string; serverName?: string;
  /** The CLI script to run (the production build's dist/switchboard.mjs); the sources' by default. */
  cli?: string;
}): Promise<ProxyProcess> {
  const metricsPort = await freePort();
  const args = [
    opts.cli ?? CLI, 'proxy', '--controller', opts.controller, '--gateway', opts.gateway ?? 'gw', '--namespace', opts.namespace ?? 'default',
    '--proxy-id', opts.proxyId ?? 'proxy-0', '--token-file', opts.tokenFile, '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--bind-address', '127.0.0.1', '--log-level', 'info', '--log-format', 'text',
    ...(opts.caFile ? ['--ca-file', opts.caFile] : []), ...(opts.serverName ? ['--server-name', opts.serverName] : []),
  ];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  const get = async (p: string): Promise<{ status: number; body: string }> => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}${p}`);
    return { status: res.status, body: await res.text() };
  };
  return {
    metricsPort,
    isReady: async () => (await get('/healthz/ready').catch(() => ({ status: 0 }))).status === 200,
    metrics: async () => (await get('/metrics')).body,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export function writeToken(dir: string, name: keyof typeof TOKENS): string {
  const file = path.join(dir, `${name}.token`);
  fs.writeFileSync(file, `${name}\n`);
  return file;
}
