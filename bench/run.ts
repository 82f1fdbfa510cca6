/**
 * `npm run bench`: a direct call, nginx and Switchboard (`--workers 1` and `--workers 2`) proxying
 * the same cheap upstream, measured in ONE run, interleaved round by round so drift on the machine
 * hits every target alike. Per target and round: a throughput run (wrk, N connections) sampling
 * the proxy's process-tree CPU before and after, then a latency run at one connection. Prints the
 * medians over rounds as markdown tables with ratios against the direct call and against nginx.
 *
 *   node bench/run.ts [--duration 5] [--rounds 3] [--connections 32] [--workers 1,2] [--access-log]
 *
 * `--access-log` adds each Switchboard target again with its default per-request access log on
 * (JSON to a file, as under a container runtime), to compare against the same target without it.
 */
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { treeCpuMicros } from './proc-cpu.ts';
import { markdownReport, summarize, type Sample } from './report.ts';
import { startNginxProxy, startSwitchboard, startUpstream, type Target } from './targets.ts';
import { runWrk } from './wrk.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    workers: { type: 'string', default: '1,2' },
    'access-log': { type: 'boolean', default: false },
  },
});
const durationS = boundedInt(values.duration, 1, 60, 'duration');
const rounds = boundedInt(values.rounds, 1, 20, 'rounds');
const connections = boundedInt(values.connections, 1, 1024, 'connections');
const workerCounts = values.workers.split(',').map((w) => boundedInt(w, 1, 64, 'workers'));

for (const tool of ['wrk', 'nginx']) {
  try {
    execFileSync('which', [tool], { stdio: 'ignore' });
  } catch {
    console.error(`${tool} is not installed: apt-get update && apt-get install -y nginx-light wrk`);
    process.exit(1);
  }
}

const started: Target[] = [];
const stopAll = async (): Promise<void> => {
  for (const t of started.reverse()) await t.stop().catch((err: unknown) => console.error(`stopping ${t.name}:`, err));
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

try {
  const upstream = track(await startUpstream());
  const direct: Target = { ...upstream, name: 'direct' };
  const proxies = [track(await startNginxProxy(portOf(upstream.url)))];
  for (const workers of workerCounts) {
    proxies.push(track(await startSwitchboard(portOf(upstream.url), workers)));
    if (values['access-log']) proxies.push(track(await startSwitchboard(portOf(upstream.url), workers, true)));
  }
  const targets = [direct, ...proxies];

  const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round so no target always runs first (or right after the heaviest).
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const target of order) {
      process.stderr.write(`round ${round + 1}/${rounds}: ${target.name}\n`);
      const sample = await measure(target, target !== direct);
      samples.get(target.name)?.push(sample);
    }
  }

  const rows = targets.map((t) => summarize(t.name, samples.get(t.name) ?? []));
  console.log(environment());
  console.log(markdownReport(rows, connections));
  if (rows.some((r) => r.errors > 0)) console.log('\n**Some runs had errors (non-2xx or socket errors): the comparison is not valid.**');
} finally {
  await stopAll();
}

async function measure(target: Target, isProxy: boolean): Promise<Sample> {
  const cpuBefore = treeCpuMicros(target.pid);
  const load = await runWrk(target.url, { connections, durationS });
  const cpuAfter = treeCpuMicros(target.pid);
  const latency = await runWrk(target.url, { connections: 1, durationS });
  return {
    requestsPerSecond: load.requestsPerSecond,
    ...(isProxy ? { cpuMicrosPerRequest: (cpuAfter - cpuBefore) / Math.max(load.requests, 1) } : {}),
    p50Ms: latency.p50Ms,
    p99Ms: latency.p99Ms,
    errors: load.errors + latency.errors,
  };
}

function track(target: Target): Target {
  started.push(target);
  return target;
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

function environment(): string {
  // `nginx -v` and `wrk --version` print to stderr / exit non-zero: read both streams through sh.
  const firstLine = (command: string): string =>
    execFileSync('sh', ['-c', `${command} 2>&1 || true`], { encoding: 'utf8' }).split('\n')[0].trim();
  return [
    `Command: \`node bench/run.ts --duration ${durationS} --rounds ${rounds} --connections ${connections} --workers ${workerCounts.join(',')}\``,
    `Date: ${new Date().toISOString()}; Node ${process.version}; ${firstLine('nginx -v')}; ${firstLine('wrk --version')}`,
    `CPU: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; upstream: nginx fixed body; wrk -t1; medians of ${rounds} interleaved rounds of ${durationS}s`,
    '',
  ].join('\n');
}

function boundedInt(text: string, min: number, max: number, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in ${min}..${max}, got ${text}`);
  return n;
}
