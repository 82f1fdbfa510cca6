/**
 * Start-up of `switchboard run` on a folder, as a user starts it (`bin/switchboard.js`): spawn →
 * `/healthz/ready` (5 ms polls), RSS at ready and 0.5 s later, CPU to ready, several spawns in a
 * row. The default folder is the bundled quickstart (`npm start`).
 *
 *   node bench/ready.ts [--dir examples/quickstart] [--rounds 4] [--dist]
 *
 * `--dist` starts the production build (dist/switchboard.mjs, `npm run build`) instead of the sources.
 *
 * Environment variables reach the gateway (e.g. SWITCHBOARD_SEMI_SPACE_MIB=8 to compare).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { treeCpuMicros } from './proc-cpu.ts';
import { freePort } from './targets.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { dir: { type: 'string', default: 'examples/quickstart' }, rounds: { type: 'string', default: '4' }, dist: { type: 'boolean', default: false } } });
// --dist: the production build (`npm run build` first) instead of the sources.
const entry = values.dist ? 'dist/switchboard.mjs' : 'bin/switchboard.js';
if (!existsSync(resolve(REPO_ROOT, entry))) throw new Error(`no ${entry}: run \`npm run build\` first`);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error('--rounds must be 1–50');

function status(url: string): Promise<number> {
  return new Promise((ok) => {
    http.get(url, { agent: false }, (res) => { res.resume(); res.on('end', () => ok(res.statusCode ?? 0)); }).on('error', () => ok(0));
  });
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

const rows: string[] = [];
for (let round = 0; round < rounds; round++) {
  const [admin, metrics] = [await freePort(), await freePort()];
  const started = performance.now();
  const child = spawn(process.execPath, [entry, 'run', '-f', resolve(REPO_ROOT, values.dir), '--admin-address', `127.0.0.1:${admin}`, '--metrics-address', `127.0.0.1:${metrics}`, '--workers', '1', '--log-level', 'warn'], { cwd: REPO_ROOT, stdio: 'ignore' });
  const exited = once(child, 'exit');
  try {
    while ((await status(`http://127.0.0.1:${admin}/healthz/ready`)) !== 200) {
      if (child.exitCode !== null || performance.now() - started > 60_000) throw new Error(`not ready (exit ${child.exitCode})`);
      await new Promise((ok) => setTimeout(ok, 5));
    }
    const readyMs = performance.now() - started;
    const pid = child.pid as number;
    const atReady = rssMiB(pid);
    const cpuMs = treeCpuMicros(pid) / 1000;
    await new Promise((ok) => setTimeout(ok, 500));
    rows.push(`| ${round + 1} | ${readyMs.toFixed(0)} | ${cpuMs.toFixed(0)} | ${atReady.toFixed(0)} | ${rssMiB(pid).toFixed(0)} |`);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}
console.log(`${entry} run -f ${values.dir} (--workers 1), ${new Date().toISOString()}\n`);
console.log(['| spawn | ready (ms) | CPU to ready (ms) | RSS at ready (MiB) | RSS 0.5 s later (MiB) |', '|---:|---:|---:|---:|---:|', ...rows].join('\n'));
