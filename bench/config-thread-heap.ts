/**
 * What the embedded config thread retains (issue 15: ≤ 200 MB RSS at 10k routes): the real thread
 * (src/embedded/config-thread-worker.ts, with the resource limits ConfigThread gives it, its nested
 * parser thread) on the files bench/control-plane.ts writes (10k HTTPRoutes in files of 100 + 1k
 * ProxyPolicies), driven by its messages: the first scan, then `--edits` route edits one file at a
 * time. After each phase the thread's heap (used after the full GC a snapshot makes) is printed;
 * with `--snapshot DIR` its heap snapshot is written there and summarised (bench/config-thread-heap-summary.ts:
 * retained size by constructor and by holder — the translator's memos, the file set, the status writer).
 *
 *   node --max-old-space-size=4096 bench/config-thread-heap.ts [--routes 10000] [--policies 1000] [--edits 30] [--snapshot DIR]
 */
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { KubeObject } from '../src/api/gateway/object.ts';
import { DEFAULT_CONFIG_LIMITS } from '../src/controller/sources/file/limits.ts';
import type { ConfigThreadInit, ConfigThreadReply } from '../src/embedded/config-thread.ts';
import { CONTROLLER_NAME, infrastructure, policy, route, yamlDocuments, type ClusterShape } from './control-plane-cluster.ts';
import { summariseHolders } from './config-thread-heap-summary.ts';

const { values } = parseArgs({ options: { routes: { type: 'string', default: '10000' }, policies: { type: 'string', default: '1000' }, namespaces: { type: 'string', default: '10' }, edits: { type: 'string', default: '30' }, snapshot: { type: 'string' } } });
const counts = { routes: Number(values.routes), policies: Number(values.policies), namespaces: Number(values.namespaces) };
const edits = Number(values.edits);
const ROUTES_PER_FILE = 100;
const shape: ClusterShape = { ...counts, servicesPerNamespace: 10, ports: Array.from({ length: counts.namespaces }, (_, i) => 20_000 + i), upstream: { host: '127.0.0.1', port: 9 } };
const MiB = 1024 * 1024;

function routeFile(file: number, edited: ReadonlyMap<number, string>): string {
  const objects: KubeObject[] = [];
  for (let i = file * ROUTES_PER_FILE; i < Math.min(shape.routes, (file + 1) * ROUTES_PER_FILE); i++) objects.push(route(shape, i, edited.get(i)));
  return yamlDocuments(objects);
}

const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-config-heap-'));
const configDir = join(dir, 'config');
mkdirSync(configDir);
const fileOf = (f: number): string => join(configDir, `routes-${String(f).padStart(3, '0')}.yaml`);
writeFileSync(join(configDir, 'infrastructure.yaml'), yamlDocuments(infrastructure(shape)));
const files = Math.ceil(shape.routes / ROUTES_PER_FILE);
for (let f = 0; f < files; f++) writeFileSync(fileOf(f), routeFile(f, new Map()));
writeFileSync(join(configDir, 'policies.yaml'), yamlDocuments(Array.from({ length: shape.policies }, (_, i) => policy(shape, i))));

const init: ConfigThreadInit = { paths: [configDir], limits: DEFAULT_CONFIG_LIMITS, options: { controllerName: CONTROLLER_NAME }, logLevel: 'silent', gatewayLogLevel: 'silent' };
// As ConfigThread starts it (src/embedded/config-thread.ts).
const worker = new Worker(new URL('../src/embedded/config-thread-worker.ts', import.meta.url), { workerData: init, resourceLimits: { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 16 } });
const waiting = new Map<number, (reply: ConfigThreadReply) => void>();
let ready: () => void = () => {};
const readyNow = new Promise<void>((ok) => (ready = ok));
worker.on('message', (reply: ConfigThreadReply) => {
  if (reply.type === 'ready') ready();
  if (!('id' in reply) || reply.type === 'translating') return;
  waiting.get(reply.id)?.(reply);
});
let nextId = 0;
const scan = (touched: readonly string[] | 'all'): Promise<ConfigThreadReply> => new Promise((ok) => {
  const id = nextId++;
  waiting.set(id, ok);
  worker.postMessage({ type: 'scan', id, touched });
});

async function measure(label: string): Promise<void> {
  // As the process sees the thread before any forced GC: what V8 holds (committed, physical) against what is live.
  const seen = await worker.getHeapStatistics();
  console.log(`${label}: heap total ${(seen.total_heap_size / MiB).toFixed(1)} MiB, physical ${(seen.total_physical_size / MiB).toFixed(1)} MiB, used ${(seen.used_heap_size / MiB).toFixed(1)} MiB (before a forced GC)`);
  let used: number;
  if (values.snapshot !== undefined) {
    const file = join(values.snapshot, `config-thread-${label}.heapsnapshot`);
    await pipeline(await worker.getHeapSnapshot(), createWriteStream(file));
    used = (await worker.getHeapStatistics()).used_heap_size;
    console.log(`\n=== ${label}: heap used after the snapshot's GC ${(used / MiB).toFixed(1)} MiB (${file})`);
    console.log(summariseHolders(readFileSync(file, 'utf8')));
  } else {
    used = (await worker.getHeapStatistics()).used_heap_size;
    console.log(`${label}: heap used ${(used / MiB).toFixed(1)} MiB (no GC forced; --snapshot forces one)`);
  }
}

try {
  await readyNow;
  const first = await scan('all');
  if (first.type !== 'updated') throw new Error(`first scan: ${JSON.stringify(first)}`);
  // The status writer runs after the post: let it finish.
  await new Promise((ok) => setTimeout(ok, 200));
  await measure('ready');
  const edited = new Map<number, string>();
  for (let n = 0; n < edits; n++) {
    const index = (n * 7919 + 13) % shape.routes;
    edited.set(index, `/e${n}`);
    const file = Math.floor(index / ROUTES_PER_FILE);
    writeFileSync(fileOf(file), routeFile(file, edited));
    const reply = await scan([resolve(fileOf(file))]);
    if (reply.type !== 'updated') throw new Error(`edit ${n}: ${JSON.stringify(reply)}`);
  }
  await new Promise((ok) => setTimeout(ok, 200));
  if (edits > 0) await measure(`after-${edits}-edits`);
} finally {
  await worker.terminate();
  rmSync(dir, { recursive: true, force: true });
}
