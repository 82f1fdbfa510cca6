/**
 * The serving thread's part of start-up at cluster scale (issue 15), in process: the IR of the
 * 10k-route cluster (bench/control-plane-cluster.ts) is translated, then the steps the serving
 * thread takes from the config thread's message to the swap are timed as they run at start-up —
 * once, with cold code, on the IR as received (deserialized from a structured clone, as a worker's
 * postMessage delivers it): deserialize, validateConfig, the first compile. Each round is a fresh
 * process (`--repeat` of them); medians and minima are printed, of wall time and of the thread's
 * CPU time (less moved by other load).
 *
 * `node bench/startup-serving.ts [--routes 10000] [--policies 1000] [--repeat 5] [--slices]`
 * (`--slices`: the compile in 10 ms slices, as the runtime runs a config that replaces another).
 * CPU-bound: run it on a quiet machine and compare trees in one session.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';

const { values } = parseArgs({ options: { routes: { type: 'string', default: '10000' }, policies: { type: 'string', default: '1000' }, repeat: { type: 'string', default: '5' }, slices: { type: 'boolean', default: false }, child: { type: 'boolean', default: false } } });

if (values.child) {
  const { translate } = await import('../src/controller/translate/index.ts');
  const { cluster } = await import('./control-plane-cluster.ts');
  const shape = { routes: Number(values.routes), policies: Number(values.policies), namespaces: 10, servicesPerNamespace: 10, ports: Array.from({ length: 10 }, (_, i) => 20_000 + i), upstream: { host: '127.0.0.1', port: 9 } };
  const bytes = v8.serialize(translate(cluster(shape)).config);
  // The serving thread's modules, loaded before the message arrives.
  const { validateConfig } = await import('../src/ir/validate.ts');
  const { createLogger } = await import('../src/common/logger.ts');
  const { compileConfigJob } = await import('../src/proxy/compile/config.ts');
  const { runInSlices, runToEnd } = await import('../src/proxy/compile/slices.ts');
  const { SecureContextCache } = await import('../src/proxy/compile/tls-contexts.ts');
  const { UpstreamPools } = await import('../src/proxy/policies/backend/pools.ts');
  // Thread CPU beside wall time: on a shared machine the wall time of a step includes waiting for a core.
  const threadCpuMs = (): number => {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  };
  const times: Record<string, number> = {};
  let mark = performance.now();
  let cpuMark = threadCpuMs();
  const lap = (name: string): void => {
    const now = performance.now();
    const cpu = threadCpuMs();
    times[name] = now - mark;
    times[`${name} CPU`] = cpu - cpuMark;
    mark = now;
    cpuMark = cpu;
  };
  const config = v8.deserialize(bytes);
  lap('deserialize');
  const problems = validateConfig(config);
  lap('validate');
  const job = compileConfigJob(config, { pools: new UpstreamPools(), secureContexts: new SecureContextCache(), logger: createLogger({ level: 'silent' }) });
  const { errors } = values.slices ? await runInSlices(job) : runToEnd(job);
  lap('compile');
  if (problems.length > 0 || errors.length > 0) throw new Error(`the IR is not clean: ${JSON.stringify([...problems, ...errors].slice(0, 3))}`);
  console.log(JSON.stringify({ ...times, bytes: bytes.length }));
} else {
  const rounds: Record<string, number>[] = [];
  for (let i = 0; i < Number(values.repeat); i++) {
    const child = spawnSync(process.execPath, [import.meta.filename, '--child', '--routes', values.routes, '--policies', values.policies, ...(values.slices ? ['--slices'] : [])], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(child.stderr);
    rounds.push(JSON.parse(child.stdout) as Record<string, number>);
  }
  console.log(`IR as a structured clone: ${((rounds[0]?.bytes ?? 0) / 1024 / 1024).toFixed(1)} MiB; compile ${values.slices ? 'in 10 ms slices' : 'in one piece'}; ${rounds.length} fresh processes`);
  for (const step of ['deserialize', 'validate', 'compile', 'deserialize CPU', 'validate CPU', 'compile CPU']) {
    const times = rounds.map((r) => r[step] as number);
    const sorted = [...times].sort((a, b) => a - b);
    console.log(`  ${step.padEnd(16)} min ${sorted[0]?.toFixed(1)} ms, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms  (${times.map((t) => t.toFixed(0)).join(' ')})`);
  }
}
