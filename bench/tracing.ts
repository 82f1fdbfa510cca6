/**
 * Tracing cost (issue 14), run by hand: `node bench/tracing.ts [--duration 5] [--rounds 3]
 * [--connections 32]`.
 *
 * One Switchboard CLI (`--workers 1`) serves the policy stack of bench/policies.ts (API key, CEL
 * authorization, local rate limit, request header transformation) on three Gateways — three
 * binds, the same route and upstream (nginx, fixed body) — that differ only in `frontend.tracing`:
 * none, `randomSampling: "0.01"` and `randomSampling: "1.0"`, exporting OTLP/HTTP to a sink in
 * this process that accepts and drops every batch. Rounds interleave the three (order rotated),
 * sampling the gateway's process-tree CPU around each wrk run: CPU-µs per request and the ratio
 * against the untraced Gateway (target: ≤ 1.10× at 1 %). The sink counts the spans it got, so a
 * run that exported nothing is flagged rather than reported as free.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const REQUEST_HEADERS = [`authorization: Bearer ${API_KEY}`, 'x-tenant: acme'];
const STARTUP_TIMEOUT_MS = 20_000;
/** The three Gateways: name and the tracing member (undefined: none). */
const VARIANTS = [
  { name: 'off', sampling: undefined },
  { name: 'sampled 1 %', sampling: '0.01' },
  { name: 'sampled 100 %', sampling: '1.0' },
] as const;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
  },
});
const durationS = boundedInt(values.duration, 1, 60, 'duration');
const rounds = boundedInt(values.rounds, 1, 20, 'rounds');
const connections = boundedInt(values.connections, 1, 1024, 'connections');

/** An OTLP/HTTP sink: answers every export with 200 and counts the bytes (no decoding: its CPU is not the gateway's). */
async function startSink(): Promise<{ url: string; exports: () => number; stop: () => Promise<void> }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, exports: () => exports, stop: () => new Promise<void>((ok) => server.close(() => ok())) };
}

function config(ports: readonly number[], upstreamPort: number, sinkUrl: string): string {
  let yaml = gatewayClass() + service('upstream', { host: '127.0.0.1', port: upstreamPort }) + `
---
apiVersion: v1
kind: Secret
metadata: { name: bench-keys, namespace: default }
stringData:
  bench: ${API_KEY}
`;
  VARIANTS.forEach((v, i) => {
    const gw = `gw${i}`;
    yaml += gateway(gw, [{ name: 'http', port: ports[i] }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r${i}, namespace: default }
spec:
  parentRefs: [{ name: ${gw} }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /policies } }], backendRefs: [{ name: upstream, port: 8080 }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: p${i}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: r${i} }]
  traffic:
    apiKeyAuthentication: { secretRef: { name: bench-keys } }
    authorization:
      policy: { matchExpressions: ['apiKey.name == "bench" && request.headers["x-tenant"] == "acme"'] }
    rateLimit: { local: [{ requests: 100000000, unit: Seconds }] }
    transformation:
      request:
        set: [{ name: x-caller, value: '"key/" + apiKey.name' }]
${v.sampling === undefined ? '' : `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: tracing${i}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: ${gw} }]
  frontend:
    tracing: { url: "${sinkUrl}", protocol: HTTP, randomSampling: "${v.sampling}" }
`}`;
  });
  return yaml;
}

interface Gateway {
  readonly pid: number;
  readonly urls: readonly string[];
  stop(): Promise<void>;
}

async function startGateway(upstreamPort: number, sinkUrl: string): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-tracing-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const [adminPort, metricsPort] = [await freePort(), await freePort()];
  writeFileSync(join(dir, 'gateway.yaml'), config(ports, upstreamPort, sinkUrl));
  const logPath = join(dir, 'switchboard.log');
  const log = openSync(logPath, 'w');
  const child = spawn(process.execPath, [
    'src/cli/main.ts', 'run', '-f', dir,
    '--admin-address', `127.0.0.1:${adminPort}`,
    '--metrics-address', `127.0.0.1:${metricsPort}`,
    '--workers', '1',
    '--log-level', 'warn',
  ], { cwd: REPO_ROOT, stdio: ['ignore', log, log] });
  const urls = ports.map((p) => `http://127.0.0.1:${p}/policies`);
  const tail = (): string => readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n');
  for (const url of urls) await waitFor200(url, { headers: REQUEST_HEADERS, child, logTail: tail, timeoutMs: STARTUP_TIMEOUT_MS });
  return {
    pid: child.pid as number,
    urls,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
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
  readonly cpuMicrosPerRequest: number;
  readonly requestsPerSecond: number;
  readonly errors: number;
}

async function measure(pid: number, url: string): Promise<Sample> {
  const before = treeCpuMicros(pid);
  const load = await wrk(url);
  const after = treeCpuMicros(pid);
  return { cpuMicrosPerRequest: (after - before) / Math.max(load.requests, 1), requestsPerSecond: load.requestsPerSecond, errors: load.errors };
}

function report(samples: readonly Sample[][]): string {
  const off = samples[0];
  const lines = [
    `| tracing | gateway CPU-µs/req (median) | per round | req/s (c=${connections}) | CPU vs off (median of per-round ratios) | errors |`,
    '|---|---:|---|---:|---:|---:|',
  ];
  VARIANTS.forEach((v, i) => {
    const s = samples[i];
    const ratio = median(s.map((x, r) => x.cpuMicrosPerRequest / off[r].cpuMicrosPerRequest));
    lines.push(`| ${v.name} | ${median(s.map((x) => x.cpuMicrosPerRequest)).toFixed(1)} | ${s.map((x) => x.cpuMicrosPerRequest.toFixed(1)).join(', ')} | ${median(s.map((x) => x.requestsPerSecond)).toFixed(0)} | ${ratio.toFixed(3)}× | ${s.reduce((n, x) => n + x.errors, 0)} |`);
  });
  return lines.join('\n');
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
  const sink = await startSink();
  stoppers.push(() => sink.stop());
  const upstream: Target = await startUpstream();
  stoppers.push(() => upstream.stop());
  const gw = await startGateway(Number(new URL(upstream.url).port), sink.url);
  stoppers.push(() => gw.stop());
  const samples: Sample[][] = VARIANTS.map(() => []);
  for (const url of gw.urls) await wrk(url);
  for (let round = 0; round < rounds; round++) {
    const order = VARIANTS.map((_, i) => (i + round) % VARIANTS.length);
    for (const i of order) {
      process.stderr.write(`round ${round + 1}/${rounds}: ${VARIANTS[i].name}\n`);
      samples[i].push(await measure(gw.pid, gw.urls[i]));
    }
  }
  // The batch processor exports within a second: wait for the last batch before judging the sink.
  await new Promise((ok) => setTimeout(ok, 1500));
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`Command: \`node bench/tracing.ts --duration ${durationS} --rounds ${rounds} --connections ${connections}\``);
  console.log(`Date: ${new Date().toISOString()}; Node ${process.version}; CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; load average at the end: ${load}; OTLP exports received: ${sink.exports()}\n`);
  console.log(report(samples));
  if (sink.exports() === 0) console.log('\n**The sink received no export: tracing was not in effect, the comparison is not valid.**');
  if (samples.flat().some((s) => s.errors > 0)) console.log('\n**Some runs had errors (non-2xx or socket errors): the comparison is not valid.**');
} finally {
  await stopAll();
}
