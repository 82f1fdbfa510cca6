/**
 * The processes a benchmark run compares, each started on free loopback ports and stopped by its
 * own pid: a cheap upstream (nginx returning a fixed body), nginx as the reference proxy, and
 * Switchboard's CLI. nginx runs from a temp prefix (`-p`/`-c`, every path inside it), so it needs
 * no root-owned directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gateway, gatewayClass, service } from '../test/support/manifests.ts';

export interface Target {
  readonly name: string;
  readonly url: string;
  /** The root of the process tree whose CPU is measured. */
  readonly pid: number;
  stop(): Promise<void>;
}

const REPO_ROOT = resolve(import.meta.dirname, '..');
const STARTUP_TIMEOUT_MS = 20_000;
/** The upstream's answer: small and fixed, so the proxy, not the upstream, is what is measured. */
const UPSTREAM_BODY = 'hello from the upstream\n';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

export async function startUpstream(): Promise<Target> {
  const port = await freePort();
  return startNginx('upstream', port, `
    server {
      listen 127.0.0.1:${port} reuseport;
      location / { return 200 '${UPSTREAM_BODY.trimEnd()}\\n'; }
    }`);
}

export async function startNginxProxy(upstreamPort: number): Promise<Target> {
  const port = await freePort();
  return startNginx('nginx', port, `
    upstream backend {
      server 127.0.0.1:${upstreamPort};
      keepalive 64;
    }
    server {
      listen 127.0.0.1:${port};
      location / {
        proxy_pass http://backend;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
      }
    }`);
}

async function startNginx(name: string, port: number, httpBlock: string): Promise<Target> {
  const prefix = mkdtempSync(join(tmpdir(), `switchboard-bench-${name}-`));
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(conf, `
worker_processes 1;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  ${httpBlock}
}
`);
  const child = spawn('nginx', ['-p', prefix, '-c', conf, '-e', join(prefix, 'error.log')], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/`;
  await waitUntilServing(url, child, () => readTail(join(prefix, 'error.log')));
  return {
    name,
    url,
    pid: child.pid as number,
    async stop() {
      await stopChild(child, 'SIGQUIT');
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

/** `accessLog`: run at info, so every request writes its access log line (the default in production). */
export async function startSwitchboard(upstreamPort: number, workers: number, accessLog = false): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-sb-'));
  const [port, adminPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() +
    gateway('bench', [{ name: 'http', port }]) +
    service('upstream', { host: '127.0.0.1', port: upstreamPort }) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: bench, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules: [{ backendRefs: [{ name: upstream, port: 8080 }] }]
`);
  const logPath = join(dir, 'switchboard.log');
  const log = openSync(logPath, 'w');
  // Started as users start it (bin/: the compile cache, and the V8 young-generation size of
  // src/cli/node-flags.js — SWITCHBOARD_SEMI_SPACE_MIB=8 in this bench's environment measures with it).
  const child = spawn(process.execPath, [
    'bin/switchboard.js', 'run', '-f', dir,
    '--admin-address', `127.0.0.1:${adminPort}`,
    '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--workers', String(workers),
    // per-request access logs off, like nginx's `access_log off`: the proxy path is what is measured
    '--log-level', accessLog ? 'info' : 'warn',
  ], { cwd: REPO_ROOT, stdio: ['ignore', log, log] });
  const url = `http://127.0.0.1:${port}/`;
  await waitUntilServing(`http://127.0.0.1:${adminPort}/healthz/ready`, child, () => readTail(logPath));
  await waitUntilServing(url, child, () => readTail(logPath));
  return {
    name: `switchboard (--workers ${workers}${accessLog ? ', access log' : ''})`,
    url,
    pid: child.pid as number,
    async stop() {
      await stopChild(child, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `url` until it answers 200; fails early if the process exits, with its log tail. */
async function waitUntilServing(url: string, child: ChildProcess, logTail: () => string): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`process ${child.pid} exited (${child.exitCode ?? child.signalCode}) before ${url} was served:\n${logTail()}`);
    }
    if ((await statusOf(url)) === 200) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${url} did not answer 200 within ${STARTUP_TIMEOUT_MS} ms:\n${logTail()}`);
}

function statusOf(url: string): Promise<number> {
  return new Promise((ok) => {
    const req = http.get(url, { agent: false, timeout: 1000 }, (res) => {
      res.resume();
      ok(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => ok(0));
  });
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function readTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}
