/**
 * Drives the real `switchboard` CLI as a child process: free ports, a temp config folder, log
 * lines to wait for, HTTP helpers. Every wait is bounded; `stop()` and `cleanup()` leave nothing
 * running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { unusedPort } from '../support/ports.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = path.join(REPO_ROOT, 'src/cli/main.ts');

/** A port that was free a moment ago, from below the ephemeral range (test/support/ports.ts). */
export function freePort(): Promise<number> {
  return unusedPort();
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sb-${prefix}-`));
}

/** Replaces a file atomically (write beside, rename over), as editors and ConfigMap updates do. */
export function replaceFile(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp-${process.pid}`, text);
  fs.renameSync(`${file}.tmp-${process.pid}`, file);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a short CLI command to completion (validate, version, usage errors). */
export function runCli(args: readonly string[], timeoutMs = 15_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`switchboard ${args.join(' ')} did not finish in ${timeoutMs} ms`)); }, timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

export interface GatewayProcess {
  readonly adminPort: number;
  readonly metricsPort: number;
  readonly child: ChildProcess;
  /** Everything the process logged so far (JSON lines, parsed). */
  logs(): Record<string, unknown>[];
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  waitReady(timeoutMs?: number): Promise<void>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export async function startGatewayProcess(configPath: string, extraArgs: readonly string[] = []): Promise<GatewayProcess> {
  const adminPort = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [
    CLI, 'run', '-f', configPath,
    '--admin-address', `127.0.0.1:${adminPort}`, '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--log-format', 'json', '--workers', '1', ...extraArgs,
  ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  const wakers = new Set<() => void>();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const complete = buffered.split('\n');
    buffered = complete.pop() ?? '';
    for (const line of complete) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    for (const wake of wakers) wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => { for (const wake of wakers) wake(); resolve(code); }));

  const waitForLog = async (predicate: (line: Record<string, unknown>) => boolean, timeoutMs = 15_000): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = lines.find(predicate);
      if (found) return found;
      if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}) before the expected log line; stderr: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`expected log line not seen in ${timeoutMs} ms; last lines: ${JSON.stringify(lines.slice(-5))}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => { wakers.delete(wake); clearTimeout(timer); resolve(); };
        const timer = setTimeout(wake, 100);
        wakers.add(wake);
      });
    }
  };

  const gateway: GatewayProcess = {
    adminPort, metricsPort, child,
    logs: () => lines,
    waitForLog,
    async waitReady(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`gateway exited (${child.exitCode}); stderr: ${stderr}; logs: ${JSON.stringify(lines.slice(-5))}`);
        const res = await request({ port: adminPort, path: '/healthz/ready' }).catch(() => undefined);
        if (res?.status === 200) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`gateway not ready within ${timeoutMs} ms; logs: ${JSON.stringify(lines.slice(-5))}`);
    },
    async stop(signal = 'SIGTERM', timeoutMs = 20_000) {
      if (child.exitCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  return gateway;
}

export interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function request(opts: { port: number; path?: string; method?: string; headers?: Record<string, string>; body?: string; agent?: http.Agent }): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: opts.port, path: opts.path ?? '/', method: opts.method ?? 'GET', headers: opts.headers, agent: opts.agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject).end(opts.body);
  });
}

/** Polls `check` until it returns a value (bounded); for changes that take a reload to show. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The quickstart objects with the gateway port and the upstream port filled in. */
export function gatewayYaml(gatewayPort: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: switchboard}
spec: {controllerName: switchboard.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: switchboard
  listeners: [{name: http, port: ${gatewayPort}, protocol: HTTP}]
`;
}

export function backendYaml(upstreamPort: number): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: {name: echo, namespace: default}
spec:
  static: {host: 127.0.0.1, port: ${upstreamPort}}
`;
}

/** A route that sets `x-generation` on the way to the upstream, so a test can see which config served it. */
export function routeYaml(generation: string | number, pathPrefix = '/'): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: echo, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
    - matches: [{path: {type: PathPrefix, value: ${pathPrefix}}}]
      filters:
        - type: RequestHeaderModifier
          requestHeaderModifier: {set: [{name: x-generation, value: "${generation}"}]}
      backendRefs: [{group: switchboard.dev, kind: ProxyBackend, name: echo}]
`;
}
