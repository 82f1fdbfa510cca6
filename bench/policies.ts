/**
 * Traffic policy cost (issue 5), run by hand: `node bench/policies.ts [--duration 5] [--rounds 5]
 * [--connections 32] [--cpu-prof DIR]`.
 *
 * One Switchboard CLI (`--workers 1`) serves two routes to the same cheap upstream (nginx, fixed
 * body): `/plain` without policies and `/policies` with a ProxyPolicy carrying the stack issue 5
 * budgets — apiKeyAuthentication (a Secret), authorization (CEL on `apiKey.name` and a header),
 * rateLimit.local (far above what the run can reach) and transformation (a request header set
 * from CEL). wrk sends the same headers to both routes, so the request bytes are identical and the
 * difference is the policy chain. Rounds interleave the two (order rotated), each sampling the
 * gateway's process-tree CPU from /proc around the wrk run; the medians give CPU-µs per request
 * and the ratio policies/plain (target ≤ 1.15×).
 *
 * `--cpu-prof DIR` starts the gateway under `node --cpu-prof` (the cluster worker inherits it) and
 * leaves the .cpuprofile files in DIR after the graceful stop, to name the top costs. `--only plain`
 * or `--only policies` loads just that route (no ratio), so each profile holds one route's costs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gateway, gatewayClass, service } from '../test/support/manifests.ts';
import { treeCpuMicros } from './proc-cpu.ts';
import { median } from './report.ts';
import { freePort, startUpstream, type Target } from './targets.ts';
import { runWrk, waitFor200, type LoadResult } from './wrk.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const API_KEY = 'sk-bench-0123456789';
/** Sent on both routes: the key the policy route checks and the header its CEL rule reads. */
const REQUEST_HEADERS = [`authorization: Bearer ${API_KEY}`, 'x-tenant: acme'];
const STARTUP_TIMEOUT_MS = 20_000;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    'cpu-prof': { type: 'string' },
    only: { type: 'string' },
  },
});
const durationS = boundedInt(values.duration, 1, 60, 'duration');
const rounds = boundedInt(values.rounds, 1, 20, 'rounds');
const connections = boundedInt(values.connections, 1, 1024, 'connections');
const profileDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
/** `--only policies` loads one route, so a profile shows that route's costs alone. */
const only = values.only;
if (only !== undefined && only !== 'plain' && only !== 'policies') throw new Error(`--only must be plain or policies, got ${only}`);

/** The gateway config: Service → upstream, a Secret with the key, the two routes, the policy. */
function config(port: number, upstreamPort: number): string {
  return gatewayClass() + gateway('bench', [{ name: 'http', port }]) + service('upstream', { host: '127.0.0.1', port: upstreamPort }) + `
---
apiVersion: v1
kind: Secret
metadata: { name: bench-keys, namespace: default }
stringData:
  bench: ${API_KEY}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: plain, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /plain } }], backendRefs: [{ name: upstream, port: 8080 }] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: policies, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /policies } }], backendRefs: [{ name: upstream, port: 8080 }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: policies, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: policies }]
  traffic:
    apiKeyAuthentication: { secretRef: { name: bench-keys } }
    authorization:
      policy: { matchExpressions: ['apiKey.name == "bench" && request.headers["x-tenant"] == "acme"'] }
    rateLimit: { local: [{ requests: 100000000, unit: Seconds }] }
    transformation:
      request:
        set: [{ name: x-caller, value: '"key/" + apiKey.name' }]
`;
}

interface Gateway {
  readonly pid: number;
  readonly baseUrl: string;
  stop(): Promise<void>;
}

async function startGateway(upstreamPort: number): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-policies-'));
  const [port, adminPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'gateway.yaml'), config(port, upstreamPort));
  const logPath = join(dir, 'switchboard.log');
  const log = openSync(logPath, 'w');
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profiling = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = spawn(process.execPath, [
    ...profiling,
    'src/cli/main.ts', 'run', '-f', dir,
    '--admin-address', `127.0.0.1:${adminPort}`,
    '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--workers', '1',
    '--log-level', 'warn',
  ], { cwd: REPO_ROOT, stdio: ['ignore', log, log] });
  const baseUrl = `http://127.0.0.1:${port}`;
  const tail = (): string => readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n');
  await waitFor200(`http://127.0.0.1:${adminPort}/healthz/ready`, { child, logTail: tail, timeoutMs: STARTUP_TIMEOUT_MS });
  await waitFor200(`${baseUrl}/plain`, { child, logTail: tail, timeoutMs: STARTUP_TIMEOUT_MS });
  await waitFor200(`${baseUrl}/policies`, { headers: REQUEST_HEADERS, child, logTail: tail, timeoutMs: STARTUP_TIMEOUT_MS });
  // Without the key the policy route must refuse: proves the ProxyPolicy is attached and enforced.
  const unauthenticated = await fetch(`${baseUrl}/policies`, { headers: { 'x-tenant': 'acme' } });
  await unauthenticated.arrayBuffer();
  if (unauthenticated.status !== 401) throw new Error(`/policies without a key answered ${unauthenticated.status}, expected 401: the policy is not in effect`);
  return {
    pid: child.pid as number,
    baseUrl,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM'); // graceful: --cpu-prof writes its profiles on a normal exit only
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function wrk(url: string): Promise<LoadResult> {
  return runWrk(url, { connections, durationS, headers: REQUEST_HEADERS });
}

interface Sample {
  cpuMicrosPerRequest: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

async function measure(gatewayPid: number, url: string): Promise<Sample> {
  const before = treeCpuMicros(gatewayPid);
  const load = await wrk(url);
  const after = treeCpuMicros(gatewayPid);
  return { cpuMicrosPerRequest: (after - before) / Math.max(load.requests, 1), requestsPerSecond: load.requestsPerSecond, p50Ms: load.p50Ms, p99Ms: load.p99Ms, errors: load.errors };
}

function report(results: ReadonlyMap<string, Sample[]>): string {
  const rows = [...results].map(([name, samples]) => ({
    name,
    cpu: median(samples.map((s) => s.cpuMicrosPerRequest)),
    cpuPerRound: samples.map((s) => s.cpuMicrosPerRequest.toFixed(1)).join(', '),
    rps: median(samples.map((s) => s.requestsPerSecond)),
    p50: median(samples.map((s) => s.p50Ms)),
    p99: median(samples.map((s) => s.p99Ms)),
    errors: samples.reduce((sum, s) => sum + s.errors, 0),
  }));
  const plain = rows[0];
  const lines = [
    `| route | gateway CPU-µs/req (median) | per round | req/s (c=${connections}) | p50 (ms) | p99 (ms) | CPU vs plain | errors |`,
    '|---|---:|---|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.cpu.toFixed(1)} | ${r.cpuPerRound} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.cpu / plain.cpu).toFixed(3)}× | ${r.errors} |`),
  ];
  // Rounds are paired (same round, adjacent in time): the median of the per-round ratios is less
  // sensitive to load drift between rounds than the ratio of the medians.
  const [plainSamples, policySamples] = [...results.values()];
  if (policySamples === undefined) return lines.join('\n');
  const paired = median(plainSamples.map((p, i) => policySamples[i].cpuMicrosPerRequest / p.cpuMicrosPerRequest));
  lines.push('', `Median of per-round ratios (policies / plain): ${paired.toFixed(3)}×`);
  return lines.join('\n');
}

function environment(): string {
  const wrkVersion = execFileSync('sh', ['-c', 'wrk --version 2>&1 || true'], { encoding: 'utf8' }).split('\n')[0].trim();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return [
    `Command: \`node bench/policies.ts --duration ${durationS} --rounds ${rounds} --connections ${connections}${profileDir ? ' --cpu-prof <dir>' : ''}\``,
    `Date: ${new Date().toISOString()}; Node ${process.version}; ${wrkVersion}`,
    `CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; load average at the end: ${load}; wrk -t1; medians of ${rounds} interleaved rounds of ${durationS}s`,
    '',
  ].join('\n');
}

function boundedInt(text: string, min: number, max: number, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}..${max}, got ${text}`);
  return n;
}

const stoppers: (() => Promise<void>)[] = [];
const stopAll = async (): Promise<void> => {
  for (const stop of stoppers.reverse()) await stop().catch((err: unknown) => console.error('stopping:', err));
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

try {
  const upstream: Target = await startUpstream();
  stoppers.push(() => upstream.stop());
  const gw = await startGateway(Number(new URL(upstream.url).port));
  stoppers.push(() => gw.stop());
  const routes = ([['plain', `${gw.baseUrl}/plain`], ['policies', `${gw.baseUrl}/policies`]] as const).filter(([name]) => only === undefined || name === only);
  const results = new Map<string, Sample[]>(routes.map(([name]) => [name, []]));
  // A short warm-up per route so JIT and connection pools are settled before the first sample.
  for (const [, url] of routes) await wrk(url);
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? routes : [...routes].reverse();
    for (const [name, url] of order) {
      process.stderr.write(`round ${round + 1}/${rounds}: ${name}\n`);
      results.get(name)?.push(await measure(gw.pid, url));
    }
  }
  console.log(environment());
  console.log(report(results));
  if ([...results.values()].flat().some((s) => s.errors > 0)) console.log('\n**Some runs had errors (non-2xx or socket errors): the comparison is not valid.**');
} finally {
  await stopAll();
}
