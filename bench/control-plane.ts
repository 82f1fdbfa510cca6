/**
 * Control-plane cost at cluster scale (issue 15), run by hand: `node bench/control-plane.ts
 * [--routes 10000] [--policies 1000] [--namespaces 10] [--edits 30] [--only translate|embedded|controller]
 * [--cpu-prof DIR] [--dist]` (`--dist`: the embedded and controller parts run the production build, dist/switchboard.mjs).
 *
 * Three parts, each in a fresh process so its memory is its own:
 *
 * 1. **translate**: the objects (bench/control-plane-cluster.ts) are built in memory and translated
 *    in this process: time of the first (cold) full translation, of a warm full translation, of
 *    N route edits and then N ProxyPolicy edits (`--edits`) through the incremental translator,
 *    and the process RSS after them.
 * 2. **embedded**: the same objects as YAML files (100 routes a file) served by `switchboard run
 *    --workers 1`: time from spawn to ready (`/healthz/ready` and a route answering), the process'
 *    RSS (now and peak), then N edits: one route's PathPrefix is changed to a new path in its file
 *    and the new path is polled on the Gateway every 2 ms until it answers 200; the time from the
 *    write to that answer is the edit's latency (p50/p99 over the edits). It includes the file
 *    source's debounce, parsing, translation, validation and the proxy's compile.
 * 3. **controller**: the same objects in the fake API server, `switchboard controller` and one
 *    `switchboard proxy` (bench/control-plane-controller.ts): time to ready, RSS, edit → served.
 *
 * Results and their reading go in bench/RESULTS.md ("Control plane"). The machine is 2 shared
 * cores: run it when nothing else is, and compare numbers from one run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeObject } from '../src/api/gateway/object.ts';
import { cluster, infrastructure, policy, route, yamlDocuments, type ClusterShape } from './control-plane-cluster.ts';
import { controllerPhase } from './control-plane-controller.ts';
import { threadCpu as processCpu } from './proc-cpu.ts';
import { freePort } from './targets.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const ROUTES_PER_FILE = 100;
const STARTUP_TIMEOUT_MS = 120_000;
const EDIT_TIMEOUT_MS = 30_000;

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    policies: { type: 'string', default: '1000' },
    namespaces: { type: 'string', default: '10' },
    edits: { type: 'string', default: '30' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
    // RSS measured again this long after ready and after the last edit (what the process settles at).
    'settle-ms': { type: 'string', default: '0' },
    // The pause after each edit is served. Longer than the threads' idle GC delay (2 s), an edit
    // meets whatever a quiet spell leaves (a memory-reducing GC, code V8 dropped): how edits
    // spaced as a person makes them are served.
    'gap-ms': { type: 'string', default: '300' },
    phase: { type: 'string' },
    // The embedded part runs the production build (dist/switchboard.mjs, `npm run build` first) instead of the sources.
    dist: { type: 'boolean', default: false },
  },
});
const counts = { routes: Number(values.routes), policies: Number(values.policies), namespaces: Number(values.namespaces) };
const edits = Number(values.edits);
const profileDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);

function shapeWith(ports: readonly number[], upstreamPort: number): ClusterShape {
  return { ...counts, servicesPerNamespace: 10, ports, upstream: { host: '127.0.0.1', port: upstreamPort } };
}

/** The CLI the embedded part spawns: the sources' bin, or with --dist the production build (which must exist). */
function cliEntry(): string {
  if (!values.dist) return 'bin/switchboard.js';
  if (!existsSync(join(REPO_ROOT, 'dist', 'switchboard.mjs'))) throw new Error('--dist: no dist/switchboard.mjs, run `npm run build` first');
  return 'dist/switchboard.mjs';
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}


/** VmRSS and VmHWM (peak) of a process, in bytes. */
function processMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

// ---------------------------------------------------------------- translate (child process)

async function translatePhase(): Promise<void> {
  const { translate } = await import('../src/controller/translate/index.ts');
  const incremental = await import('../src/controller/translate/incremental.ts').catch(() => undefined);
  const shape = shapeWith(Array.from({ length: counts.namespaces }, (_, i) => 20_000 + i), 9);
  const objects = cluster(shape);
  const baseRss = process.memoryUsage().rss;
  let started = performance.now();
  translate(objects);
  const coldMs = performance.now() - started;
  const coldRss = process.memoryUsage().rss;
  const warm: number[] = [];
  for (let i = 0; i < 3; i++) {
    started = performance.now();
    translate(objects);
    warm.push(performance.now() - started);
  }
  const lines = [
    `objects: ${objects.length} (${counts.routes} HTTPRoutes, ${counts.policies} ProxyPolicies, ${counts.namespaces} Gateways)`,
    `full translation, cold: ${coldMs.toFixed(0)} ms; warm (median of 3): ${percentile(warm, 50).toFixed(0)} ms`,
    `RSS: ${mib(baseRss)} with the objects, ${mib(coldRss)} after the first translation, ${mib(process.memoryUsage().rss)} now`,
  ];
  if (incremental) {
    const translator = new incremental.IncrementalTranslator();
    started = performance.now();
    translator.replace(objects);
    const firstMs = performance.now() - started;
    const editTimes: number[] = [];
    let current: KubeObject[] = objects;
    for (let i = 0; i < edits; i++) {
      const index = (i * 7919) % counts.routes;
      const edited = route(shape, index, `/e${i}`);
      current = current.map((o) => (o.kind === 'HTTPRoute' && o.metadata.name === edited.metadata.name && o.metadata.namespace === edited.metadata.namespace ? edited : o));
      started = performance.now();
      translator.replace(current);
      editTimes.push(performance.now() - started);
    }
    lines.push(`incremental: first ${firstMs.toFixed(0)} ms; one route edit p50 ${percentile(editTimes, 50).toFixed(1)} ms, p99 ${percentile(editTimes, 99).toFixed(1)} ms (${edits} edits); RSS ${mib(process.memoryUsage().rss)}`);
    // A ProxyPolicy edit (its rate limit): the policy pass re-applies only the routes at its points.
    const policyTimes: number[] = [];
    for (let i = 0; i < Math.min(edits, counts.policies); i++) {
      const edited = policy(shape, (i * 37) % counts.policies) as KubeObject & { spec: { traffic: { rateLimit: { local: { requests: number }[] } } } };
      edited.spec.traffic.rateLimit.local[0]!.requests = 1000 + i;
      current = current.map((o) => (o.kind === 'ProxyPolicy' && o.metadata.name === edited.metadata.name && o.metadata.namespace === edited.metadata.namespace ? edited : o));
      started = performance.now();
      translator.replace(current);
      policyTimes.push(performance.now() - started);
    }
    if (policyTimes.length > 0) lines.push(`incremental: one ProxyPolicy edit p50 ${percentile(policyTimes, 50).toFixed(1)} ms, p99 ${percentile(policyTimes, 99).toFixed(1)} ms (${policyTimes.length} edits)`);
  }
  console.log(lines.join('\n'));
}

// ---------------------------------------------------------------- embedded (spawned CLI)

function startUpstream(): Promise<http.Server> {
  const server = http.createServer((_req, res) => res.end('ok\n'));
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
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

function routeFile(shape: ClusterShape, file: number, edited: ReadonlyMap<number, string>): string {
  const objects: KubeObject[] = [];
  for (let i = file * ROUTES_PER_FILE; i < Math.min(shape.routes, (file + 1) * ROUTES_PER_FILE); i++) objects.push(route(shape, i, edited.get(i)));
  return yamlDocuments(objects);
}

async function embeddedPhase(): Promise<void> {
  const upstream = await startUpstream();
  const ports: number[] = [];
  for (let i = 0; i < counts.namespaces; i++) ports.push(await freePort());
  const shape = shapeWith(ports, (upstream.address() as AddressInfo).port);
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-control-plane-'));
  const configDir = join(dir, 'config');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'infrastructure.yaml'), yamlDocuments(infrastructure(shape)));
  const files = Math.ceil(shape.routes / ROUTES_PER_FILE);
  for (let f = 0; f < files; f++) writeFileSync(join(configDir, `routes-${String(f).padStart(3, '0')}.yaml`), routeFile(shape, f, new Map()));
  writeFileSync(join(configDir, 'policies.yaml'), yamlDocuments(Array.from({ length: shape.policies }, (_, i) => policy(shape, i))));

  const [adminPort, metricsPort] = [await freePort(), await freePort()];
  const logPath = join(dir, 'switchboard.log');
  const log = openSync(logPath, 'w');
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profiling = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const started = performance.now();
  const child = spawn(process.execPath, [
    ...profiling, cliEntry(), 'run', '-f', configDir,
    '--admin-address', `127.0.0.1:${adminPort}`, '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--workers', '1', '--log-level', 'warn',
  ], { cwd: REPO_ROOT, stdio: ['ignore', log, log] });
  const tail = (): string => readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM'); // graceful: --cpu-prof writes its profiles on a normal exit only
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    agent.destroy();
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (!(await until200(`http://127.0.0.1:${adminPort}/healthz/ready`, STARTUP_TIMEOUT_MS, 10))) throw new Error(`not ready:\n${tail()}`);
    const readyMs = performance.now() - started;
    const last = shape.routes - 1;
    if (!(await until200(`http://127.0.0.1:${ports[last % shape.namespaces]}/r${last}`, 5000, 10))) throw new Error(`route r${last} not served:\n${tail()}`);
    const afterStart = processMemory(child.pid as number);
    const settleMs = Number(values['settle-ms']);
    let settled: string = '';
    if (settleMs > 0) {
      await new Promise((ok) => setTimeout(ok, settleMs));
      settled = `; RSS ${mib(processMemory(child.pid as number).rss)} ${settleMs} ms later`;
    }

    const edited = new Map<number, string>();
    const latencies: number[] = [];
    const editWindows: { edit: number; startUs: number; endUs: number }[] = [];
    const cpuBefore = processCpu(child.pid as number);
    for (let n = 0; n < edits; n++) {
      const index = (n * 7919 + 13) % shape.routes;
      const path = `/e${n}`;
      edited.set(index, path);
      const file = Math.floor(index / ROUTES_PER_FILE);
      const text = routeFile(shape, file, edited);
      const url = `http://127.0.0.1:${ports[index % shape.namespaces]}${path}`;
      if ((await status(url)) === 200) throw new Error(`${url} answers before the edit`);
      const at = performance.now();
      writeFileSync(join(configDir, `routes-${String(file).padStart(3, '0')}.yaml`), text);
      if (!(await until200(url, EDIT_TIMEOUT_MS, 2))) throw new Error(`edit ${n} (${url}) not served within ${EDIT_TIMEOUT_MS} ms:\n${tail()}`);
      latencies.push(performance.now() - at);
      // CLOCK_MONOTONIC µs, the clock of the gateway's .cpuprofile timestamps: bench/profile-edits.ts cuts them per edit.
      const endUs = Number(process.hrtime.bigint() / 1000n);
      editWindows.push({ edit: n, startUs: endUs - Math.round((performance.now() - at) * 1000), endUs });
      // Let the reload settle (status, GC) so edits are measured one at a time.
      await new Promise((ok) => setTimeout(ok, Number(values['gap-ms'])));
    }
    const afterEdits = processMemory(child.pid as number);
    if (profileDir) writeFileSync(join(profileDir, 'edits.json'), JSON.stringify(editWindows));
    const cpuAfter = processCpu(child.pid as number);
    let settledAfterEdits = '';
    if (settleMs > 0) {
      await new Promise((ok) => setTimeout(ok, settleMs));
      settledAfterEdits = `; RSS ${mib(processMemory(child.pid as number).rss)} ${settleMs} ms later`;
    }
    console.log([
      `embedded (switchboard run --workers 1, ${files + 2} files): ready in ${readyMs.toFixed(0)} ms; RSS ${mib(afterStart.rss)} (peak ${mib(afterStart.peak)})${settled}`,
      `route edit → served: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms over ${latencies.length} edits; RSS after ${mib(afterEdits.rss)} (peak ${mib(afterEdits.peak)})${settledAfterEdits}`,
      `  each edit, in order (ms): ${latencies.map((l) => l.toFixed(0)).join(' ')}`,
      // Includes serving the 2 ms polls and the 300 ms settles: compare trees, not absolute cost.
      `gateway CPU per edit (all threads / serving thread): ${((cpuAfter.all - cpuBefore.all) / latencies.length).toFixed(0)} / ${((cpuAfter.main - cpuBefore.main) / latencies.length).toFixed(0)} ms; ready: ${(cpuBefore.all / 1000).toFixed(1)} / ${(cpuBefore.main / 1000).toFixed(1)} CPU-s`,
    ].join('\n'));
  } finally {
    await stop();
  }
}

// ---------------------------------------------------------------- main

if (values.phase === 'translate') {
  await translatePhase();
} else {
  console.log(`node bench/control-plane.ts --routes ${counts.routes} --policies ${counts.policies} --namespaces ${counts.namespaces} --edits ${edits}${values.dist ? ' --dist' : ''}  (${new Date().toISOString()})`);
  if (values.only === undefined || values.only === 'translate') {
    const child = spawnSync(process.execPath, [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), import.meta.filename, '--phase', 'translate', '--edits', String(edits), '--routes', String(counts.routes), '--policies', String(counts.policies), '--namespaces', String(counts.namespaces)], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (child.status !== 0) process.exitCode = 1;
  }
  if (values.only === undefined || values.only === 'embedded') await embeddedPhase();
  if (values.only === undefined || values.only === 'controller') await controllerPhase({ repoRoot: REPO_ROOT, counts, edits, profileDir, cli: cliEntry(), gapMs: Number(values['gap-ms']) });
}
