/**
 * Interleaved A/B runs for performance work: several Switchboard source trees (say, a `git archive`
 * of the commit before a change and one after), the Node floor (`node-floor.ts`) and nginx, against
 * one upstream, round by round, reporting medians. The machine is shared and noisy; interleaving
 * and medians are what make two trees comparable within one run.
 *
 *   node bench/compare.ts --rounds 5 --duration 3 floor nginx tree=/tmp/before tree=.,workers=2
 *   node bench/compare.ts --header 'Connection: close' tree=.,workers=2 tree=.,workers=2,env=X=1
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { gateway, gatewayClass, service } from '../test/support/manifests.ts';
import { treeCpuMicros } from './proc-cpu.ts';
import { freePort, startNginxProxy, startUpstream, type Target } from './targets.ts';
import { parseWrk, type LoadResult } from './wrk.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    header: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const connections = Number(values.connections);
const wrkExtra = values.header ? ['-H', values.header] : [];
const run = promisify(execFile);

async function wrk(url: string, c: number): Promise<LoadResult> {
  const { stdout } = await run('wrk', ['-t1', `-c${c}`, `-d${durationS}s`, '--latency', ...wrkExtra, url], { timeout: (durationS + 30) * 1000 });
  return parseWrk(stdout);
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(url).then(async (r) => { await r.arrayBuffer(); return r.status === 200; }, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered 200`);
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
}

async function startTarget(spec: string, upstreamPort: number): Promise<Target> {
  if (spec === 'nginx') return startNginxProxy(upstreamPort);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  if (spec === 'floor') {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'node-floor.ts'), String(upstreamPort), String(port)], { stdio: 'inherit' });
    await waitFor(url);
    return { name: spec, url, pid: child.pid as number, stop: stopper(child) };
  }
  const opts = new Map(spec.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const tree = resolve(opts.get('tree') ?? '.');
  const env = { ...process.env };
  const extra = opts.get('env');
  if (extra) env[extra.slice(0, extra.indexOf('='))] = extra.slice(extra.indexOf('=') + 1);
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-compare-'));
  writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('bench', [{ name: 'http', port }]) + service('upstream', { host: '127.0.0.1', port: upstreamPort }) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: bench, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules: [{ backendRefs: [{ name: upstream, port: 8080 }] }]
`);
  const child = spawn(process.execPath, ['src/cli/main.ts', 'run', '-f', dir, '--admin-address', `127.0.0.1:${await freePort()}`,
    '--metrics-address', `127.0.0.1:${await freePort()}`, '--workers', opts.get('workers') ?? '1', '--log-level', 'warn'], { cwd: tree, env, stdio: ['ignore', 'ignore', 'inherit'] });
  await waitFor(url);
  const stop = stopper(child);
  return { name: spec, url, pid: child.pid as number, stop: async () => { await stop(); rmSync(dir, { recursive: true, force: true }); } };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const started: Target[] = [];
try {
  const upstream = await startUpstream();
  started.push(upstream);
  const upstreamPort = Number(new URL(upstream.url).port);
  const targets: Target[] = [];
  for (const spec of positionals) targets.push(await startTarget(spec, upstreamPort));
  started.push(...targets);
  for (const t of targets) await wrk(t.url, connections); // warm-up: JIT, pools
  const samples = new Map<string, { rps: number; cpu: number; p50: number; p99: number; errors: number }[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + round) % targets.length];
      const before = treeCpuMicros(t.pid);
      const load = await wrk(t.url, connections);
      const cpu = (treeCpuMicros(t.pid) - before) / Math.max(load.requests, 1);
      const latency = await wrk(t.url, 1);
      samples.get(t.name)?.push({ rps: load.requestsPerSecond, cpu, p50: latency.p50Ms, p99: latency.p99Ms, errors: load.errors + latency.errors });
    }
  }
  console.log(`wrk -t1 -c${connections} ${wrkExtra.join(' ')}; ${rounds} interleaved rounds of ${durationS}s; medians (all CPU-µs/req samples)\n`);
  console.log('| target | req/s | CPU-µs/req | p50 c=1 (ms) | p99 c=1 (ms) | errors | CPU samples |\n|---|---:|---:|---:|---:|---:|---|');
  for (const [name, xs] of samples) {
    console.log(`| ${name} | ${median(xs.map((x) => x.rps)).toFixed(0)} | ${median(xs.map((x) => x.cpu)).toFixed(1)} | ${median(xs.map((x) => x.p50)).toFixed(3)} | ${median(xs.map((x) => x.p99)).toFixed(3)} | ${xs.reduce((s, x) => s + x.errors, 0)} | ${xs.map((x) => x.cpu.toFixed(0)).join(', ')} |`);
  }
} finally {
  for (const t of started.reverse()) await t.stop().catch((err: unknown) => console.error(`stopping ${t.name}:`, err));
}
