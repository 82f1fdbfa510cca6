/**
 * The controller part of bench/control-plane.ts (`--only controller`): the cluster's objects
 * (bench/control-plane-cluster.ts) are put in the fake API server (test/kube/fake-apiserver.ts,
 * in this process, token auth), then `switchboard controller` (a child process, kubeconfig file)
 * and one `switchboard proxy` (a child process, the first namespace's Gateway) are spawned. It
 * times spawn → the controller's `/healthz/ready`, spawn → the proxy serving that namespace's last
 * route, both processes' RSS, and N edits: one route of that namespace gets a new PathPrefix
 * through the API server (a PUT, as `kubectl apply` would; once the leader's initial status
 * write has settled) and the new path is polled on the proxy every 2 ms until it answers 200 (watch event, debounce, translation, status,
 * distribution over gRPC, the proxy's validation and compile).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { FakeApiServer } from '../test/kube/fake-apiserver.ts';
import { cluster, namespaceName, route, type ClusterShape } from './control-plane-cluster.ts';
import { threadCpu } from './proc-cpu.ts';
import { freePort } from './targets.ts';

const CONTROLLER_TOKEN = 'bench-controller-token';
const PROXY_TOKEN = 'bench-proxy-token';
const STARTUP_TIMEOUT_MS = 120_000;
const EDIT_TIMEOUT_MS = 30_000;

export interface ControllerBenchOptions {
  readonly repoRoot: string;
  readonly counts: { readonly routes: number; readonly policies: number; readonly namespaces: number };
  readonly edits: number;
  /** The pause after each served edit (bench/control-plane.ts --gap-ms); default 300 ms. */
  readonly gapMs?: number;
  /** What runs `controller` and `proxy`: bin/switchboard.js (the sources), or dist/switchboard.mjs (`--dist`, the production build). */
  readonly cli?: string;
  /** `--cpu-prof` for both children, profiles written here. */
  readonly profileDir: string | undefined;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function status(url: string): Promise<number> {
  return new Promise((ok) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    req.on('error', () => ok(0));
  });
}

async function until200(url: string, timeoutMs: number, intervalMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await status(url)) === 200) return true;
    await new Promise((ok) => setTimeout(ok, intervalMs));
  }
  return false;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

function processMemory(pid: number): { rss: number; peak: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM'); // graceful: --cpu-prof writes its profiles on a normal exit only
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export async function controllerPhase(options: ControllerBenchOptions): Promise<void> {
  const { counts, edits, repoRoot, profileDir } = options;
  const cli = options.cli ?? 'bin/switchboard.js';
  const upstream = http.createServer((_req, res) => res.end('ok\n'));
  await new Promise<void>((ok) => upstream.listen(0, '127.0.0.1', ok));
  // Every port distinct: freePort() can hand out a port again while nothing is bound to it yet
  // (a Gateway listener once got the xDS port: the proxy NACKed and the run timed out).
  const taken = new Set<number>();
  const distinctPort = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  const ports: number[] = [];
  for (let i = 0; i < counts.namespaces; i++) ports.push(await distinctPort());
  const shape: ClusterShape = { ...counts, servicesPerNamespace: 10, ports, upstream: { host: '127.0.0.1', port: (upstream.address() as AddressInfo).port } };
  const namespace = namespaceName(0);

  const server = await FakeApiServer.start({ token: CONTROLLER_TOKEN });
  server.tokens.set(CONTROLLER_TOKEN, { username: 'system:serviceaccount:switchboard-system:switchboard-controller' });
  server.tokens.set(PROXY_TOKEN, { username: `system:serviceaccount:${namespace}:gw-proxy` });
  for (const object of cluster(shape)) server.put(object as unknown as Record<string, unknown>);

  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-controller-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfigYaml());
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, PROXY_TOKEN);
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  // Extra Node flags for both children (e.g. `--trace-gc`), from the environment so the parent
  // bench process stays untouched: BENCH_CHILD_NODE_FLAGS="--trace-gc".
  const childFlags = (process.env.BENCH_CHILD_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const profiling = [...childFlags, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [])];
  const [health, metrics, admin, xds, proxyMetrics] = [await distinctPort(), await distinctPort(), await distinctPort(), await distinctPort(), await distinctPort()];
  const controllerLog = join(dir, 'controller.log');
  const proxyLog = join(dir, 'proxy.log');
  const tail = (file: string): string => readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');

  // BENCH_HEAP_DIR=DIR: the controller runs as bench/controller-heap-child.ts and both its threads'
  // heaps are snapshotted at ready, once the initial status write settled and after the edits
  // (summarise with bench/controller-heap-summary.ts). Snapshots take seconds: the timings of such a run are not comparable.
  const heapDir = process.env.BENCH_HEAP_DIR;
  let snapshots = 0;
  const snapshotHeaps = async (): Promise<void> => {
    if (!heapDir) return;
    const marker = join(heapDir, `heap-${snapshots++}.json`);
    controller.kill('SIGUSR2');
    for (const deadline = Date.now() + STARTUP_TIMEOUT_MS; !existsSync(marker) && Date.now() < deadline;) await new Promise((ok) => setTimeout(ok, 200));
  };
  if (heapDir) mkdirSync(heapDir, { recursive: true });
  let proxy: ChildProcess | undefined;
  const controllerStarted = performance.now();
  const controller = spawn(process.execPath, [
    ...profiling, ...(heapDir ? ['bench/controller-heap-child.ts'] : [cli, 'controller']), '--kubeconfig', kubeconfig, '--xds-mode', 'plaintext',
    '--health-address', `127.0.0.1:${health}`, '--metrics-address', `127.0.0.1:${metrics}`, '--admin-address', `127.0.0.1:${admin}`, '--xds-address', `127.0.0.1:${xds}`,
    '--leader-election-namespace', 'switchboard-system', '--log-level', 'warn',
  ], { cwd: repoRoot, stdio: ['ignore', openSync(controllerLog, 'w'), openSync(controllerLog, 'a')], env: { ...process.env, KUBECONFIG: '/nonexistent', POD_NAME: 'controller-0', ...(heapDir ? { BENCH_HEAP_DIR: heapDir } : {}) } });
  try {
    if (!(await until200(`http://127.0.0.1:${health}/healthz/ready`, STARTUP_TIMEOUT_MS, 10))) throw new Error(`controller not ready:\n${tail(controllerLog)}`);
    const controllerReadyMs = performance.now() - controllerStarted;
    const controllerAtReady = processMemory(controller.pid as number);
    await snapshotHeaps();

    const proxyStarted = performance.now();
    proxy = spawn(process.execPath, [
      ...profiling, cli, 'proxy', '--controller', `http://127.0.0.1:${xds}`, '--gateway', 'gw', '--namespace', namespace,
      '--proxy-id', 'bench-proxy', '--token-file', tokenFile, '--metrics-address', `127.0.0.1:${proxyMetrics}`, '--bind-address', '127.0.0.1', '--log-level', 'warn',
    ], { cwd: repoRoot, stdio: ['ignore', openSync(proxyLog, 'w'), openSync(proxyLog, 'a')] });
    // The namespace's last route: the proxy serves its whole slice once it answers.
    let last = counts.routes - 1;
    while (last % counts.namespaces !== 0) last--;
    if (!(await until200(`http://127.0.0.1:${ports[0]}/r${last}`, STARTUP_TIMEOUT_MS, 10))) throw new Error(`proxy does not serve r${last}:\n${tail(proxyLog)}\n${tail(controllerLog)}`);
    const proxyServingMs = performance.now() - proxyStarted;
    const proxyAtStart = processMemory(proxy.pid as number);

    // The leader writes every object's status once after its first translation (11k patches):
    // edits are measured after that settles (no status write for 1 s), as in a running cluster.
    const writes = (): number => server.requests.filter((r) => r.method === 'PATCH').length;
    const settleStarted = performance.now();
    for (let seen = -1, quietSince = performance.now(); performance.now() - quietSince < 1000 && performance.now() - settleStarted < STARTUP_TIMEOUT_MS;) {
      const now = writes();
      if (now !== seen) [seen, quietSince] = [now, performance.now()];
      await new Promise((ok) => setTimeout(ok, 100));
    }
    const statusWrites = writes();
    await snapshotHeaps();
    const settledMs = performance.now() - controllerStarted;

    const latencies: number[] = [];
    // startUs/endUs: CLOCK_MONOTONIC; the ms fields: since each child's spawn (≈ the `NNN ms:` of its --trace-gc lines).
    const editWindows: { edit: number; startUs: number; endUs: number; controllerMs: number; proxyMs: number }[] = [];
    // CPU over the edits (each with its settle, --gap-ms; the proxy's includes answering the 2 ms polls):
    // on a loaded machine it moves far less between runs than the latencies do.
    const controllerCpuBefore = threadCpu(controller.pid as number);
    const proxyCpuBefore = threadCpu(proxy.pid as number);
    for (let n = 0; n < edits; n++) {
      // A route of the first namespace (index ≡ 0 mod namespaces), spread over the set.
      const index = ((n * 7919 + 13) % Math.floor(counts.routes / counts.namespaces)) * counts.namespaces;
      const path = `/e${n}`;
      const url = `http://127.0.0.1:${ports[0]}${path}`;
      if ((await status(url)) === 200) throw new Error(`${url} answers before the edit`);
      const at = performance.now();
      server.put(route(shape, index, path) as unknown as Record<string, unknown>);
      if (!(await until200(url, EDIT_TIMEOUT_MS, 2))) throw new Error(`edit ${n} (${url}) not served within ${EDIT_TIMEOUT_MS} ms:\n${tail(controllerLog)}\n${tail(proxyLog)}`);
      latencies.push(performance.now() - at);
      // CLOCK_MONOTONIC µs, the clock of the children's .cpuprofile timestamps: bench/profile-edits.ts cuts them per edit.
      const endUs = Number(process.hrtime.bigint() / 1000n);
      editWindows.push({ edit: n, startUs: endUs - Math.round((performance.now() - at) * 1000), endUs, controllerMs: Math.round(at - controllerStarted), proxyMs: Math.round(at - proxyStarted) });
      await new Promise((ok) => setTimeout(ok, options.gapMs ?? 300));
    }
    if (profileDir) writeFileSync(join(profileDir, 'edits.json'), JSON.stringify(editWindows));
    const controllerCpu = threadCpu(controller.pid as number);
    const proxyCpu = threadCpu(proxy.pid as number);
    const perEdit = (after: number, before: number): string => ((after - before) / latencies.length).toFixed(1);
    const controllerAfter = processMemory(controller.pid as number);
    const proxyAfter = processMemory(proxy.pid as number);
    await snapshotHeaps();
    console.log([
      `controller (switchboard controller + switchboard proxy for ${namespace}): controller ready in ${controllerReadyMs.toFixed(0)} ms (RSS ${mib(controllerAtReady.rss)}); proxy serving in ${proxyServingMs.toFixed(0)} ms after its spawn (RSS ${mib(proxyAtStart.rss)})`,
      `initial status write: ${statusWrites} patches, settled ${(settledMs / 1000).toFixed(1)} s after the controller's spawn`,
      `route edit (API server PUT) → served by the proxy: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms over ${latencies.length} edits; RSS after: controller ${mib(controllerAfter.rss)} (peak ${mib(controllerAfter.peak)}), proxy ${mib(proxyAfter.rss)} (peak ${mib(proxyAfter.peak)})`,
      // In order: a slow first edit (work left over from start-up) reads differently from a slow tail.
      `  each edit, in order (ms): ${latencies.map((l) => l.toFixed(0)).join(' ')}`,
      `CPU per edit (ms): controller all threads ${perEdit(controllerCpu.all, controllerCpuBefore.all)} / main thread ${perEdit(controllerCpu.main, controllerCpuBefore.main)}; proxy ${perEdit(proxyCpu.all, proxyCpuBefore.all)}`,
    ].join('\n'));
  } finally {
    if (proxy) await stopChild(proxy);
    await stopChild(controller);
    agent.destroy();
    upstream.close();
    await server.close();
    // With a profile directory the children's logs (and their --trace-gc lines) are kept beside the profiles.
    if (profileDir) for (const log of [controllerLog, proxyLog]) copyFileSync(log, join(profileDir, basename(log)));
    rmSync(dir, { recursive: true, force: true });
  }
}
