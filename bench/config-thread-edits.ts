/**
 * The embedded config thread's work per file edit, in process (issue 15): the same pieces the
 * thread runs (src/embedded/config-thread-worker.ts: FileSet scan, IncrementalDedupe,
 * IncrementalTranslator.replace, StatusWriter.update), on the files bench/control-plane.ts writes
 * (10k HTTPRoutes in files of 100 + 1k ProxyPolicies), with `process.cpuUsage()` around each
 * phase. Files are read and parsed in this thread (the gateway parses in its parser thread): the
 * "scan" column includes that parse of the one edited file.
 *
 *   node bench/config-thread-edits.ts [--routes 10000] [--policies 1000] [--edits 20]
 *   node --cpu-prof --cpu-prof-dir DIR bench/config-thread-edits.ts --windows DIR && node bench/profile-edits.ts DIR
 *
 * Prints the start-up (first scan + full translation) and, per edit, CPU-ms of scan / dedupe /
 * translate / status writer, the first edits one by one and the median of the rest.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GCProfiler } from 'node:v8';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { KubeObject } from '../src/api/gateway/object.ts';
import { FileSet } from '../src/controller/sources/file/file-set.ts';
import { IncrementalDedupe } from '../src/controller/store/store.ts';
import { IncrementalTranslator } from '../src/controller/translate/incremental.ts';
import { StatusWriter } from '../src/embedded/status-writer.ts';
import { infrastructure, policy, route, yamlDocuments, type ClusterShape } from './control-plane-cluster.ts';

const { values } = parseArgs({ options: { routes: { type: 'string', default: '10000' }, policies: { type: 'string', default: '1000' }, namespaces: { type: 'string', default: '10' }, edits: { type: 'string', default: '20' }, windows: { type: 'string' } } });
const counts = { routes: Number(values.routes), policies: Number(values.policies), namespaces: Number(values.namespaces) };
const edits = Number(values.edits);
const ROUTES_PER_FILE = 100;
const shape: ClusterShape = { ...counts, servicesPerNamespace: 10, ports: Array.from({ length: counts.namespaces }, (_, i) => 20_000 + i), upstream: { host: '127.0.0.1', port: 9 } };

function routeFile(file: number, edited: ReadonlyMap<number, string>): string {
  const objects: KubeObject[] = [];
  for (let i = file * ROUTES_PER_FILE; i < Math.min(shape.routes, (file + 1) * ROUTES_PER_FILE); i++) objects.push(route(shape, i, edited.get(i)));
  return yamlDocuments(objects);
}

const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-config-thread-'));
const configDir = join(dir, 'config');
mkdirSync(configDir);
const fileOf = (f: number): string => join(configDir, `routes-${String(f).padStart(3, '0')}.yaml`);
try {
  writeFileSync(join(configDir, 'infrastructure.yaml'), yamlDocuments(infrastructure(shape)));
  const files = Math.ceil(shape.routes / ROUTES_PER_FILE);
  for (let f = 0; f < files; f++) writeFileSync(fileOf(f), routeFile(f, new Map()));
  writeFileSync(join(configDir, 'policies.yaml'), yamlDocuments(Array.from({ length: shape.policies }, (_, i) => policy(shape, i))));

  const fileSet = new FileSet([configDir]);
  const deduper = new IncrementalDedupe();
  // As the config thread makes it (only the changes leave it).
  const translator = new IncrementalTranslator({}, { patchRecords: true, statusChanges: false });
  const writer = new StatusWriter(pino({ level: 'silent' }));
  const ms = (start: NodeJS.CpuUsage): number => {
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  const round = async (touched: ReadonlySet<string> | 'all'): Promise<{ scan: number; dedupe: number; translate: number; status: number; total: number; wall: number; gc: number }> => {
    // GC pauses of this thread (wall ms) in the round: the first edit pays start-up's.
    const gc = new GCProfiler();
    gc.start();
    const wallStart = performance.now();
    let at = process.cpuUsage();
    const scan = await fileSet.scan(undefined, touched);
    const scanMs = ms(at);
    at = process.cpuUsage();
    const { objects: sourced } = deduper.dedupe(scan.snapshot.objects);
    const objects = sourced.map((s) => s.object);
    const dedupeMs = ms(at);
    at = process.cpuUsage();
    const result = translator.replace(objects);
    const translateMs = ms(at);
    const wall = performance.now() - wallStart;
    at = process.cpuUsage();
    writer.update(result.statuses);
    const statusMs = ms(at);
    const gcMs = (gc.stop()?.statistics ?? []).reduce((sum, event) => sum + event.cost / 1000, 0);
    return { scan: scanMs, dedupe: dedupeMs, translate: translateMs, status: statusMs, total: scanMs + dedupeMs + translateMs + statusMs, wall, gc: gcMs };
  };
  const start = await round('all');
  console.log(`start-up: scan ${start.scan.toFixed(0)}, dedupe ${start.dedupe.toFixed(0)}, translate ${start.translate.toFixed(0)}, status ${start.status.toFixed(0)} CPU-ms; GC ${start.gc.toFixed(0)} ms`);
  const edited = new Map<number, string>();
  const rows: Awaited<ReturnType<typeof round>>[] = [];
  const windows: { edit: number; startUs: number; endUs: number }[] = [];
  for (let n = 0; n < edits; n++) {
    const index = (n * 7919 + 13) % shape.routes;
    edited.set(index, `/e${n}`);
    const file = Math.floor(index / ROUTES_PER_FILE);
    writeFileSync(fileOf(file), routeFile(file, edited));
    // CLOCK_MONOTONIC µs, as bench/profile-edits.ts cuts a profile.
    const startUs = Number(process.hrtime.bigint() / 1000n);
    rows.push(await round(new Set([resolve(fileOf(file))])));
    windows.push({ edit: n, startUs, endUs: Number(process.hrtime.bigint() / 1000n) });
    // The gateway's edits come 300 ms apart: timers and idle-time GC run between them.
    await new Promise((ok) => setTimeout(ok, 50));
  }
  const fmt = (r: (typeof rows)[number]): string => `${r.total.toFixed(1)} (scan ${r.scan.toFixed(1)}, dedupe ${r.dedupe.toFixed(1)}, translate ${r.translate.toFixed(1)}, status ${r.status.toFixed(1)}; wall to post ${r.wall.toFixed(1)}; GC ${r.gc.toFixed(1)})`;
  for (const [i, r] of rows.slice(0, 3).entries()) console.log(`edit ${i}: ${fmt(r)}`);
  const median = (key: keyof (typeof rows)[number]): number => {
    const sorted = rows.slice(3).map((r) => r[key]).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? NaN;
  };
  console.log(`edits 3…${rows.length - 1}, median: ${median('total').toFixed(1)} (scan ${median('scan').toFixed(1)}, dedupe ${median('dedupe').toFixed(1)}, translate ${median('translate').toFixed(1)}, status ${median('status').toFixed(1)}; wall to post ${median('wall').toFixed(1)}; GC ${median('gc').toFixed(1)})`);
  if (values.windows !== undefined) writeFileSync(join(values.windows, 'edits.json'), JSON.stringify(windows));
  console.log(`in order (CPU-ms): ${rows.map((r) => r.total.toFixed(0)).join(' ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
