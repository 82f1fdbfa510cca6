/**
 * A load-independent cost per request of the plain route, for placing small regressions at a
 * commit when CPU-time samples on this shared VM spread by ±40 % (bench/RESULTS.md, sessions 5–7).
 * Not part of `npm test`.
 *
 * The plain route of bench/compare.ts (one Gateway, one HTTPRoute to a Service on loopback, nginx
 * upstream, `--workers 1`, `--log-level warn`) is started from each source tree, warmed up, then
 * driven by a small keep-alive client in this process that sends a FIXED number of requests (c
 * connections, each with one request in flight). Two measures:
 *
 *   --mode callgrind  the gateway runs under `valgrind --tool=callgrind --smc-check=all-non-file`
 *                     (V8 writes code at run time); after the warm-up each interval of n requests is
 *                     closed with `callgrind_control --dump`, whose file holds the instructions
 *                     executed in it (every thread: JIT compilers and GC helpers included). Per
 *                     request = the slope between intervals of N1 and N2 requests, so a constant
 *                     per interval (timers, the dump itself) cancels. Slow (~50× native): use a
 *                     few thousand requests. Only `node=--predictable` with `--connections 1`
 *                     repeats (same tree within 1.5 % per interval, bench/RESULTS.md session 7):
 *                     otherwise V8's background threads and the batching follow wall time. Even
 *                     then the intervals are not proportional to n (tiering and collections fall
 *                     where they fall), so compare trees interval by interval, not by slope.
 *   --mode cpu        (default) native runs; CPU time of every thread of the gateway from
 *                     /proc/<pid>/task/<tid>/schedstat (nanoseconds, unlike /proc/<pid>/stat's
 *                     10 ms ticks) around short intervals of n requests, trees interleaved per
 *                     sample; per tree the MINIMUM and the 20th percentile of the per-request
 *                     samples (noise on this VM — other processes, steal — only ever adds time).
 *                     `--client wrk`: each sample is `--duration` s of wrk -c<connections> instead
 *                     (the gateway saturated, as in bench/compare.ts), per request = CPU ÷ wrk's count.
 *
 *   node bench/instructions.ts --mode cpu --samples 30 --requests 4000 tree=/tmp/sb-d51b757 tree=.
 *   node bench/instructions.ts --client wrk --connections 32 --duration 1 --samples 30 tree=A tree=B
 *   node bench/instructions.ts --mode callgrind --warmup 4000 --requests 1000,2000 --connections 1 \
 *     'tree=/tmp/sb-d51b757,node=--predictable'
 *
 * A tree is a source tree with node_modules (a `git archive` of a commit with node_modules linked);
 * `tree=DIR,env=NAME=VALUE` adds one environment variable, `tree=DIR,node=--a --b` Node/V8 flags
 * (under callgrind `node=--single-threaded` keeps V8's background compiler and GC threads, whose
 * spinning and timing add instructions that do not follow the request count, on the main thread).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { gateway, gatewayClass, service } from '../test/support/manifests.ts';
import { freePort, startUpstream, type Target } from './targets.ts';
import { parseWrk } from './wrk.ts';

const run = promisify(execFile);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: 'string', default: 'cpu' },
    samples: { type: 'string', default: '30' },
    requests: { type: 'string', default: '4000' },
    warmup: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '8' },
    client: { type: 'string', default: 'node' },
    duration: { type: 'string', default: '1' },
    /** Each gateway's stdout goes to PREFIX<n>.log (with node=--trace-gc: its collections). */
    stdout: { type: 'string' },
    /** callgrind: keep each interval's dump as PREFIX<gateway>-<interval>.out (callgrind_annotate reads it). */
    keep: { type: 'string' },
  },
});
const mode = values.mode as 'cpu' | 'callgrind';
if (mode !== 'cpu' && mode !== 'callgrind') throw new Error(`--mode cpu|callgrind, not ${values.mode}`);
const connections = Number(values.connections);
const warmup = Number(values.warmup);
const requestCounts = values.requests.split(',').map(Number);
const REQUEST_TIMEOUT_MS = mode === 'callgrind' ? 120_000 : 10_000;
const client = values.client as 'node' | 'wrk';
if (client !== 'node' && client !== 'wrk') throw new Error(`--client node|wrk, not ${values.client}`);

interface Gateway {
  readonly name: string;
  readonly port: number;
  /** The gateway's own pid (under callgrind: valgrind's, which is the same process). */
  readonly pid: number;
  readonly dir: string;
  /** Its place among the gateways started (names --stdout and --keep files). */
  readonly index: number;
  stop(): Promise<void>;
}

let gatewayCount = 0;

async function startGateway(spec: string, upstreamPort: number): Promise<Gateway> {
  const opts = new Map(spec.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const tree = resolve(opts.get('tree') ?? '.');
  const env = { ...process.env };
  const extra = opts.get('env');
  if (extra) env[extra.slice(0, extra.indexOf('='))] = extra.slice(extra.indexOf('=') + 1);
  const nodeFlags = opts.get('node')?.split(' ') ?? [];
  const index = gatewayCount++;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-instructions-'));
  writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('bench', [{ name: 'http', port }]) + service('upstream', { host: '127.0.0.1', port: upstreamPort }) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: bench, namespace: default }
spec:
  parentRefs: [{ name: bench }]
  rules: [{ backendRefs: [{ name: upstream, port: 8080 }] }]
`);
  const gatewayArgs = [...nodeFlags, 'src/cli/main.ts', 'run', '-f', dir, '--admin-address', `127.0.0.1:${await freePort()}`,
    '--metrics-address', `127.0.0.1:${await freePort()}`, '--workers', '1', '--log-level', 'warn'];
  const child: ChildProcess = mode === 'callgrind'
    ? spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, '--dump-line=no', process.execPath, ...gatewayArgs],
      { cwd: tree, env, stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(process.execPath, gatewayArgs, { cwd: tree, env, stdio: ['ignore', values.stdout ? openSync(`${values.stdout}${index}.log`, 'w') : 'ignore', 'inherit'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    await waitFor(port, mode === 'callgrind' ? 600 : 30, () => child.exitCode !== null);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${spec}: ${String(err)}\n${stderr}`, { cause: err });
  }
  return {
    name: spec, port, pid: child.pid as number, dir, index,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitFor(port: number, seconds: number, dead: () => boolean): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    if (dead()) throw new Error('the gateway exited');
    const ok = await get(new http.Agent(), port).then((s) => s === 200, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} never answered 200`);
}

function get(agent: http.Agent, port: number): Promise<number> {
  return new Promise((ok, fail) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
      res.on('error', fail);
    });
    req.on('error', fail);
    // A gateway that stopped answering (seen once under valgrind with --predictable) fails the run instead of hanging it.
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
  });
}

/** Sends exactly `n` GETs over `connections` keep-alive connections, one in flight on each. */
async function drive(port: number, n: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let next = 0;
  let failed = 0;
  const lane = async (): Promise<void> => {
    while (next < n) {
      next++;
      if (await get(agent, port).catch(() => 0) !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: connections }, lane));
  agent.destroy();
  if (failed > 0) throw new Error(`${failed} of ${n} requests failed`);
}

/** --client wrk (cpu mode): `--duration` seconds of wrk -t1 -c<connections>; returns the requests it made. */
async function driveWrk(port: number): Promise<number> {
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${values.duration}s`, '--latency', `http://127.0.0.1:${port}/`], { timeout: 60_000 });
  const load = parseWrk(stdout);
  if (load.errors > 0) throw new Error(`wrk: ${load.errors} errors`);
  return load.requests;
}

/** CPU nanoseconds of every thread of `pid` so far (schedstat's first field: time on a CPU). */
function processCpuNanos(pid: number): number {
  let sum = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended between listing and reading: its time is lost, which only lowers a sample
    }
  }
  return sum;
}

let intervalCount = 0;

/** Closes the current callgrind interval; returns the instructions (Ir) executed in it. */
function callgrindInterval(g: Gateway): number {
  const before = new Set(readdirSync(g.dir));
  execFileSync('callgrind_control', ['--dump', String(g.pid)], { stdio: 'ignore' });
  const fresh = readdirSync(g.dir).filter((f) => f.startsWith('callgrind.out') && !before.has(f));
  if (fresh.length !== 1) throw new Error(`expected one new dump, found ${fresh.join(', ')}`);
  const text = readFileSync(join(g.dir, fresh[0]), 'utf8');
  if (values.keep) copyFileSync(join(g.dir, fresh[0]), `${values.keep}${g.index}-${intervalCount++}.out`);
  rmSync(join(g.dir, fresh[0]));
  const summary = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!summary) throw new Error(`no summary in ${fresh[0]}`);
  return Number(summary[1]);
}

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];

const started: (Target | Gateway)[] = [];
try {
  const upstream = await startUpstream();
  started.push(upstream);
  const upstreamPort = Number(new URL(upstream.url).port);
  const gateways: Gateway[] = [];
  // Under callgrind one gateway at a time: each is ~50× slower and needs a core of its own.
  if (mode === 'callgrind') {
    console.log(`callgrind: warm-up ${warmup}, intervals of ${requestCounts.join(', ')} requests, c=${connections}; instructions per request = slope\n`);
    console.log('| tree | Ir per interval | Ir/req (slope) |\n|---|---|---:|');
    for (const spec of positionals) {
      const g = await startGateway(spec, upstreamPort);
      started.push(g);
      await drive(g.port, warmup);
      callgrindInterval(g);
      const points: [number, number][] = [];
      for (const n of requestCounts) {
        await drive(g.port, n);
        points.push([n, callgrindInterval(g)]);
      }
      const [n1, ir1] = points[0];
      const [n2, ir2] = points[points.length - 1];
      console.log(`| ${spec} | ${points.map(([n, ir]) => `${n}: ${ir}`).join('; ')} | ${((ir2 - ir1) / (n2 - n1)).toFixed(0)} |`);
      await g.stop();
      started.pop();
    }
  } else {
    for (const spec of positionals) gateways.push(await startGateway(spec, upstreamPort));
    started.push(...gateways);
    for (const g of gateways) await drive(g.port, warmup);
    const n = requestCounts[0];
    const samples = new Map<string, number[]>(gateways.map((g) => [g.name, []]));
    const rounds = Number(values.samples);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < gateways.length; i++) {
        const g = gateways[(i + round) % gateways.length];
        const before = processCpuNanos(g.pid);
        const made = client === 'wrk' ? await driveWrk(g.port) : (await drive(g.port, n), n);
        samples.get(g.name)?.push((processCpuNanos(g.pid) - before) / made / 1000);
      }
    }
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const what = client === 'wrk' ? `wrk -t1 -c${connections} -d${values.duration}s` : `${n} requests, node client c=${connections}`;
    console.log(`cpu: warm-up ${warmup} requests, ${rounds} interleaved samples of ${what}; CPU-µs per request of the gateway's threads; load ${load}\n`);
    console.log('| tree | min | p20 | median | samples (sorted) |\n|---|---:|---:|---:|---|');
    for (const [name, xs] of samples) {
      console.log(`| ${name} | ${quantile(xs, 0).toFixed(2)} | ${quantile(xs, 0.2).toFixed(2)} | ${quantile(xs, 0.5).toFixed(2)} | ${[...xs].sort((a, b) => a - b).map((x) => x.toFixed(1)).join(' ')} |`);
    }
  }
} finally {
  for (const t of started.reverse()) await t.stop().catch((err: unknown) => console.error(`stopping ${t.name}:`, err));
}
