/**
 * What the serving thread retains for a compiled cluster-sized config (issue 15: ≤ 200 MB RSS at
 * 10k routes), run by hand: `node --expose-gc bench/serving-heap.ts [--routes 10000] [--policies 1000]
 * [--namespaces 10] [--top 30] [--snapshot DIR]`.
 *
 * The objects of bench/control-plane-cluster.ts are translated in this process; the config is
 * structured-cloned (as it crosses from the translator thread: nothing shared with the
 * translator's caches), checked by validateConfig (which keeps per-record state) and applied to a
 * ProxyRuntime on ephemeral ports, as the serving thread of `switchboard run` does. The heap is
 * measured after a full GC at each step: the IR alone, the IR validated, the IR compiled; and two
 * heap snapshots (IR validated / IR compiled) are summarised by node type and constructor or
 * function name, so the difference is what the compiled form costs, per route.
 */
import { parseArgs } from 'node:util';
import { deserialize, serialize, writeHeapSnapshot } from 'node:v8';
import type { Bind, ProxyConfig, Route } from '../src/ir/types.ts';
import { readFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { cluster, type ClusterShape } from './control-plane-cluster.ts';

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    policies: { type: 'string', default: '1000' },
    namespaces: { type: 'string', default: '10' },
    top: { type: 'string', default: '30' },
    snapshot: { type: 'string' },
    'no-snapshot': { type: 'boolean', default: false },
    // Route edits applied after the first config, as patched configs (one route's path each): what each leaves retained.
    edits: { type: 'string', default: '0' },
  },
});
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const routes = Number(values.routes);

const [{ translate }, { validateConfig }, { ProxyRuntime }, { silentLogger }, { Registry }, { patchConfig }] = await Promise.all([
  import('../src/controller/translate/index.ts'),
  import('../src/ir/validate.ts'),
  import('../src/proxy/runtime.ts'),
  import('../src/common/logger.ts'),
  import('prom-client'),
  import('../src/ir/config-delta.ts'),
]);

function heap(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}
const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const perRoute = (b: number) => `${(b / routes).toFixed(0)} B/route`;

const shape: ClusterShape = {
  routes, policies: Number(values.policies), namespaces: Number(values.namespaces), servicesPerNamespace: 10,
  ports: Array.from({ length: Number(values.namespaces) }, (_, i) => 20_000 + i), upstream: { host: '127.0.0.1', port: 9 },
};
// The runtime's own state (pools, handlers, metrics) before any config, so it is not counted.
const runtime = new ProxyRuntime({ logger: silentLogger, registry: new Registry(), bindAddress: '127.0.0.1', listenPort: () => 0 });
// Serialized as it crosses from the translator thread: the bytes live outside the V8 heap, so the
// heap measured now is everything but the config.
const wire = [serialize(translate(cluster(shape)).config)];
const dir = values.snapshot ? resolve(values.snapshot) : join(tmpdir(), `serving-heap-${process.pid}`);
const takeSnapshots = !values['no-snapshot'];
if (takeSnapshots) mkdirSync(dir, { recursive: true });
// The snapshot first: writing one collects more than heap() does (it would lower what follows).
const empty = takeSnapshots ? writeHeapSnapshot(join(dir, 'base.heapsnapshot')) : '';
const base = heap();
const config = deserialize(wire.pop() as Buffer) as ProxyConfig;
const withIr = heap();
const problems = validateConfig(config);
if (problems.length > 0) throw new Error(`invalid config: ${JSON.stringify(problems.slice(0, 3))}`);
const before = takeSnapshots ? writeHeapSnapshot(join(dir, 'ir.heapsnapshot')) : '';
const validated = heap();

const result = await runtime.apply(config);
if (result.errors.length > 0) throw new Error(`apply errors: ${result.errors.slice(0, 3).join('; ')}`);
const after = takeSnapshots ? writeHeapSnapshot(join(dir, 'compiled.heapsnapshot')) : '';
const compiled = heap();

console.log(`${routes} routes, ${shape.policies} policies, ${shape.namespaces} gateways (heapUsed after full GC)`);
console.log(`IR (structured clone):      ${mib(withIr - base)}  ${perRoute(withIr - base)}`);
console.log(`validateConfig's state:     ${mib(validated - withIr)}  ${perRoute(validated - withIr)}`);
console.log(`compiled (ProxyRuntime):    ${mib(compiled - validated)}  ${perRoute(compiled - validated)}`);
console.log(`total serving-thread config: ${mib(compiled - base)}  ${perRoute(compiled - base)}`);

if (takeSnapshots) {
  const [s0, s1, s2] = [summarise(empty), summarise(before), summarise(after)];
  growth('IR received and validated', s0, s1);
  growth('IR compiled', s1, s2);
  if (!values.snapshot) rmSync(dir, { recursive: true, force: true });
}
const edits = Number(values.edits);
if (edits > 0) {
  const elapsed = await applyEdits(config, edits);
  await new Promise((resolve) => setImmediate(resolve));
  if (takeSnapshots && values.snapshot) writeHeapSnapshot(join(dir, 'edited.heapsnapshot'));
  const afterEdits = heap();
  console.log(`after ${edits} route edits:       ${mib(afterEdits - compiled)} more (${(((afterEdits - compiled) / edits) / 1024).toFixed(0)} KiB an edit); ${(elapsed / edits).toFixed(1)} ms an apply`);
}
await runtime.close({ graceMs: 0 });

/**
 * Each edit as the embedded gateway makes it: one route replaced (a new path), every other entry
 * and the binds the previous objects, the delta recorded (patchConfig). Only the runtime holds the
 * configs once this returns. Milliseconds of all the applies.
 */
async function applyEdits(first: ProxyConfig, count: number): Promise<number> {
  let current = first;
  const keys = Object.keys(first.routes);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const key = keys[(i * 7919 + 13) % keys.length] as string;
    const before = current.routes[key] as Route;
    const edited: Route = { ...before, rules: before.rules.map((r) => ({ ...r, matches: [{ path: { type: 'PathPrefix', value: `/e${i}` } }] })) };
    current = patchConfig(current, `edit-${i}`, current.binds as Bind[], { set: { [key]: edited }, removed: [] }, { set: {}, removed: [] });
    const applied = await runtime.apply(current);
    if (applied.errors.length > 0) throw new Error(`edit ${i}: ${applied.errors.slice(0, 3).join('; ')}`);
    // A task of its own, as each edit is in the gateway: V8 keeps a WeakRef's target (config-delta's
    // `from`) alive until the task that made or read it ends.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return performance.now() - started;
}

function growth(title: string, a: Map<string, { count: number; size: number }>, b: Map<string, { count: number; size: number }>): void {
  const rows = [...new Set([...a.keys(), ...b.keys()])].map((key) => {
    const x = a.get(key) ?? { count: 0, size: 0 };
    const y = b.get(key) ?? { count: 0, size: 0 };
    return { key, count: y.count - x.count, size: y.size - x.size };
  }).sort((p, q) => q.size - p.size);
  const total = rows.reduce((sum, r) => sum + r.size, 0);
  console.log(`\n${title}: ${mib(total)} of self size; top ${values.top} by node:`);
  for (const row of rows.slice(0, Number(values.top))) console.log(`${(row.size / 1024).toFixed(0).padStart(8)} KiB ${String(row.count).padStart(8)} × ${(row.count / routes).toFixed(2).padStart(6)}/route  ${row.key}`);
}

/** Self size and count by node type and name (constructor for objects, function name for closures). */
function summarise(path: string): Map<string, { count: number; size: number }> {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]!]!;
    let name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : snapshot.strings[snapshot.nodes[i + nameAt]!]!;
    if (type === 'array' || type === 'hidden' || type === 'code') name = name.replace(/\d+/g, 'N').slice(0, 60);
    const key = `${type}: ${name.slice(0, 80)}`;
    const row = out.get(key) ?? { count: 0, size: 0 };
    row.count++;
    row.size += snapshot.nodes[i + sizeAt]!;
    out.set(key, row);
  }
  return out;
}
