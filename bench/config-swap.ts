/**
 * Config swap: how long the proxy's compile of a large config takes, and the longest the serving
 * event loop is held during it (the stall a request sees). The config is the hostile suite's:
 * `--routes` HTTPRoutes (default 10,000), each with a ProxyPolicy holding a CEL authorization rule.
 *
 *   node bench/config-swap.ts [--routes 10000] [--rounds 3] [--slice-ms 10]
 *
 * `--slice-ms Infinity` compiles in one piece (the behaviour before slicing).
 */
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../src/api/gateway/object.ts';
import { translate } from '../src/controller/translate/index.ts';
import { silentLogger } from '../src/common/logger.ts';
import { ProxyRuntime } from '../src/proxy/runtime.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../test/support/manifests.ts';

const { values } = parseArgs({ options: { routes: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' }, 'slice-ms': { type: 'string', default: '10' } } });
const routes = Number(values.routes);
const rounds = Number(values.rounds);
const sliceMs = Number(values['slice-ms']);

function objectsOf(text: string): KubeObject[] {
  return parseAllDocuments(text).map((d) => d.toJS() as KubeObject).filter((o) => o !== null && o !== undefined);
}

function manifests(count: number, salt: string): string {
  const parts = [gatewayClass(), gateway('gw', [{ name: 'http', port: 18080 }]), service('echo', { host: '127.0.0.1', port: 9 })];
  for (let i = 0; i < count; i++) {
    parts.push(prefixRoute(`bulk-${i}`, `/bulk/${i}`, 'echo'));
    parts.push(routeTrafficPolicy(`bulk-${i}`, `bulk-${i}`, `authorization:\n  action: Deny\n  policy:\n    matchExpressions: ['request.path.startsWith("/bulk/${i}/${salt}") && request.headers["x-role"] != "admin"']\n`));
  }
  return parts.join('');
}

const runtime = new ProxyRuntime({ logger: silentLogger, bindAddress: '127.0.0.1', listenPort: () => 0, compileSliceMs: sliceMs });
try {
  for (let round = 0; round < rounds; round++) {
    // A different expression per round: no cache can answer for the previous round's compile.
    const { config } = translate(objectsOf(manifests(routes, `admin${round}`)));
    const delay = monitorEventLoopDelay({ resolution: 1 });
    // Also measure the longest gap between timer ticks: what a request waiting on the loop sees.
    let worstGap = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 1);
    delay.enable();
    const started = performance.now();
    const cpu = process.cpuUsage();
    const { errors } = await runtime.apply(config);
    const total = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    // Let the timer tick once more so a gap that ends with the apply is counted.
    await new Promise((ok) => setTimeout(ok, 5));
    delay.disable();
    clearInterval(tick);
    console.log(JSON.stringify({ round, routes, sliceMs: values['slice-ms'], totalMs: Math.round(total), cpuMs: Math.round((user + system) / 1000), worstLoopGapMs: Math.round(worstGap), delayMaxMs: Math.round(delay.max / 1e6), errors: errors.length }));
  }
} finally {
  await runtime.close({ graceMs: 100 });
}
