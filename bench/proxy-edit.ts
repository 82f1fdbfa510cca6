/**
 * The serving side of one route edit, in process (issue 15): what the embedded gateway's serving
 * thread (and a remote `switchboard proxy`) does with a config change after the translator made
 * it. Run by hand: `node bench/proxy-edit.ts [--routes 10000] [--policies 1000] [--edits 30]
 * [--rounds 3] [--kind route|endpoints] [--cpu-prof FILE]`.
 *
 * The cluster is bench/control-plane.ts's (bench/control-plane-cluster.ts). Each edit changes one
 * route's PathPrefix (`--kind endpoints`: one EndpointSlice's address, so one Backend changes), translates it with the IncrementalTranslator (not measured), builds the
 * update the config thread posts (binds equal to the last sent cross as null), serialises it as
 * postMessage does (v8 serialize, not measured: the config thread's) and then measures, on this
 * thread, the steps the serving thread runs:
 *
 *   receive   v8.deserialize of the update (the structured clone postMessage does)
 *   patch     applyUpdate: the IR records with the changed entries set
 *   validate  validateConfig against the config served before
 *   apply     ProxyRuntime.apply: compile (one piece: compileSliceMs Infinity) and swap
 *
 * Times are CPU (process.cpuUsage, user + system, this thread only runs here) in ms per edit:
 * medians (and minima) over the edits of every round. `--cpu-prof FILE` writes a V8 CPU profile
 * of the measured steps only (inspector), for finding where a step's time goes.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import type { KubeObject } from '../src/api/gateway/object.ts';
import { silentLogger } from '../src/common/logger.ts';
import { IncrementalTranslator } from '../src/controller/translate/incremental.ts';
import { applyUpdate, type TranslationUpdate } from '../src/embedded/translator-thread.ts';
import type { ProxyConfig } from '../src/ir/types.ts';
import { BindSender } from '../src/embedded/bind-sender.ts';
import { validateConfig } from '../src/ir/validate.ts';
import { ProxyRuntime } from '../src/proxy/runtime.ts';
import { cluster, route, type ClusterShape } from './control-plane-cluster.ts';

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    policies: { type: 'string', default: '1000' },
    namespaces: { type: 'string', default: '10' },
    edits: { type: 'string', default: '30' },
    rounds: { type: 'string', default: '3' },
    kind: { type: 'string', default: 'route' },
    'cpu-prof': { type: 'string' },
  },
});
const namespaces = Number(values.namespaces);
const shape: ClusterShape = {
  routes: Number(values.routes), policies: Number(values.policies), namespaces, servicesPerNamespace: 10,
  ports: Array.from({ length: namespaces }, (_, i) => 20_000 + i), upstream: { host: '127.0.0.1', port: 9 },
};
const edits = Number(values.edits);
const rounds = Number(values.rounds);

const STEPS = ['receive', 'patch', 'validate', 'apply'] as const;
type Step = (typeof STEPS)[number];

function cpuMs(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const translator = new IncrementalTranslator();
const sendBinds = new BindSender();
let objects: KubeObject[] = cluster(shape);
const runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0, compileSliceMs: Infinity });

function updateFor(next: ReturnType<IncrementalTranslator['replace']>): Buffer {
  const update: TranslationUpdate = {
    version: next.config.version, binds: sendBinds.send(next.config.binds, next.changes.full),
    changes: { ...next.changes, statuses: { set: {}, removed: [] } }, secretPaths: next.secretPaths, secretValues: next.secretValues,
  };
  return v8.serialize(update);
}

let served: ProxyConfig | undefined;
async function serve(wire: Buffer, times?: Record<Step, number[]>): Promise<void> {
  let t = process.cpuUsage();
  const update = v8.deserialize(wire) as TranslationUpdate;
  times?.receive.push(cpuMs(t));
  t = process.cpuUsage();
  const config = applyUpdate(served, update);
  times?.patch.push(cpuMs(t));
  t = process.cpuUsage();
  const problems = validateConfig(config, served);
  times?.validate.push(cpuMs(t));
  if (problems.length > 0) throw new Error(`invalid config: ${JSON.stringify(problems.slice(0, 3))}`);
  t = process.cpuUsage();
  const { errors } = await runtime.apply(config);
  times?.apply.push(cpuMs(t));
  if (errors.length > 0) throw new Error(`apply errors: ${errors.slice(0, 3).join('; ')}`);
  served = config;
}

const started = performance.now();
const first = Object.fromEntries(STEPS.map((s) => [s, [] as number[]])) as Record<Step, number[]>;
await serve(updateFor(translator.replace(objects)), first);
console.log(`first config: ${(performance.now() - started).toFixed(0)} ms wall with its translation (${shape.routes} routes, ${shape.policies} policies); CPU ms: ${STEPS.map((s) => `${s} ${first[s][0]?.toFixed(1)}`).join(', ')}`);

const session = values['cpu-prof'] === undefined ? undefined : new Session();
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}

const times = Object.fromEntries(STEPS.map((s) => [s, [] as number[]])) as Record<Step, number[]>;
let edit = 0;
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < edits; i++, edit++) {
    if (values.kind === 'endpoints') {
      // The first EndpointSlice gets another address every edit (10.0.0.x: never dialled here).
      const at = objects.findIndex((o) => o.kind === 'EndpointSlice');
      const slice = objects[at] as KubeObject & { endpoints: { addresses: string[] }[] };
      objects = objects.map((o, j) => (j === at ? { ...slice, endpoints: [{ ...slice.endpoints[0], addresses: [`10.0.${edit % 250}.${1 + (edit % 200)}`] }] } as KubeObject : o));
    } else {
      const index = (edit * 7919) % shape.routes;
      const edited = route(shape, index, `/e${edit}`);
      objects = objects.map((o) => (o.kind === 'HTTPRoute' && o.metadata.name === edited.metadata.name && o.metadata.namespace === edited.metadata.namespace ? edited : o));
    }
    const wire = updateFor(translator.replace(objects));
    if (session && round === 0 && i === 0) await session.post('Profiler.start');
    await serve(wire, times);
  }
}
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(values['cpu-prof'] as string, JSON.stringify(profile));
  session.disconnect();
}

const load = (await import('node:os')).loadavg()[0]?.toFixed(1);
console.log(`${edit} ${values.kind} edits, load average ${load}; CPU ms per edit, median (min):`);
let total = 0;
for (const s of STEPS) {
  total += median(times[s]);
  console.log(`  ${s.padEnd(9)} ${median(times[s]).toFixed(2)} (${Math.min(...times[s]).toFixed(2)})`);
}
const sums = times.receive.map((_, i) => STEPS.reduce((a, s) => a + (times[s][i] ?? 0), 0));
console.log(`  total     ${median(sums).toFixed(2)} (${Math.min(...sums).toFixed(2)}); sum of medians ${total.toFixed(2)}`);
await runtime.close({ graceMs: 0 });
