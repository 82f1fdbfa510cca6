/**
 * Hostile configuration files written into the watched folder of a running gateway (issue 11,
 * item 7). Before the fix a 50,000-alias file stalled every request for a minute (yaml's
 * duplicate-key check is quadratic, and the parse ran on the event loop that serves requests)
 * and a 100 MB file took gigabytes and tens of seconds. Now files are parsed in a worker thread
 * under limits: ordinary requests stay prompt, the file's error is logged with its path, and the
 * objects it held before keep serving. A large valid config is translated in a worker thread too,
 * so with `--workers 1` (proxy and control plane on one event loop) requests stay prompt meanwhile.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually, freePort, request, startGatewayProcess, tempDir, type GatewayProcess } from '../cli/harness.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { PROMPT_MS, probeWhile, startHostileGateway, type HostileGateway } from './harness.ts';

/**
 * `count` mapping keys, each anchoring a list that aliases the one before (20,000: 0.5 MB). Over the alias
 * limit, and the shape that made yaml's pairwise duplicate-key check run for a minute at 50,000.
 */
export function aliasChainYaml(count: number): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: bomb, namespace: default}', 'data:', '  k0: &a0 "x"'];
  for (let i = 1; i < count; i++) lines.push(`  k${i}: &a${i} [*a${i - 1}]`);
  return `${lines.join('\n')}\n`;
}

/** A well-formed file of `mib` MiB (one ConfigMap per ~100 bytes), over the 16 MiB file limit. */
function largeYaml(mib: number): string {
  const doc = (i: number): string => `---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-${i}, namespace: default}\ndata: {k: v}\n`;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < mib * 1024 * 1024; i++) {
    const d = doc(i);
    parts.push(d);
    size += d.length;
  }
  return parts.join('');
}

for (const workers of [1, 2]) {
  describe(`hostile config files (--workers ${workers})`, () => {
    let echo: EchoServer;
    let gw: HostileGateway;
    before(async () => {
      echo = await startEchoServer('echo');
      const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}') + service('echo', echo);
      // The route lives in its own file, which the test then breaks: its last good version must keep serving.
      gw = await startHostileGateway(yaml, { workers, files: { 'route.yaml': prefixRoute('r', '/', 'echo') } });
      await gw.waitFor('the route to serve', async () => (await gw.request({ path: '/x' })).status === 200);
    });
    after(async () => { await gw?.close(); await echo?.close(); });

    const probe = async (): Promise<void> => {
      const res = await gw.request({ path: '/x' });
      assert.equal(res.status, 200);
    };

    const writeAndWaitForError = (name: string, text: string, error: RegExp) => async (): Promise<void> => {
      writeFileSync(join(gw.configDir, name), text);
      await gw.waitFor(`the error of ${name} in the log`, async () => new RegExp(`${name}[^\\n]*\\n?[^\\n]*${error.source}|${error.source}[^\\n]*${name}`).test(gw.output()), 20_000);
    };

    it('a 20,000-alias file is refused with its path while requests stay prompt', async () => {
      const report = await probeWhile(writeAndWaitForError('bomb.yaml', aliasChainYaml(20_000), /more than 1000 aliases/), probe, { maxMs: 25_000 });
      assert.equal(report.hostile.status, 'fulfilled', String((report.hostile as PromiseRejectedResult).reason));
      assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${report.worstProbeMs.toFixed(0)} ms`);
    });

    it('a 24 MiB file is refused without being parsed while requests stay prompt', async () => {
      const report = await probeWhile(writeAndWaitForError('large.yaml', largeYaml(24), /more than the 16 MiB a file may hold/), probe, { maxMs: 25_000 });
      assert.equal(report.hostile.status, 'fulfilled', String((report.hostile as PromiseRejectedResult).reason));
      assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${report.worstProbeMs.toFixed(0)} ms`);
    });

    it('a route file overwritten with the alias bomb keeps serving its last good route', async () => {
      writeFileSync(join(gw.configDir, 'route.yaml'), aliasChainYaml(5_000));
      await gw.waitFor('the error of route.yaml', async () => /route\.yaml[\s\S]{0,400}(more than 1000 aliases|last good version)/.test(gw.output()), 20_000);
      await probe();
    });
  });
}

/**
 * `files` files of `perFile` HTTPRoutes (`/bulk/<i>` to echo), each with a ProxyPolicy holding an
 * authorization rule: a large but valid config (10 × 1,000 of each is 6 MB, far under the file
 * limits). Measured on the 2-core test machine: translation takes 1.3–5 s (CEL compilation and
 * hashing mostly); with it on the serving loop the worst probe was 2.3 s, in the translator thread
 * 1.0 s. What was left was the proxy compiling the config where it serves, in one piece (0.6–0.9 s
 * at 8,000 routes on a quiet machine, 1.8 s loaded); it now compiles in slices of ~10 ms.
 */
function bulkRouteFiles(files: number, perFile: number): Map<string, string> {
  const out = new Map<string, string>();
  for (let f = 0; f < files; f++) {
    const parts: string[] = [];
    for (let i = f * perFile; i < (f + 1) * perFile; i++) {
      parts.push(prefixRoute(`bulk-${i}`, `/bulk/${i}`, 'echo'));
      parts.push(routeTrafficPolicy(`bulk-${i}`, `bulk-${i}`, `authorization:\n  action: Deny\n  policy:\n    matchExpressions: ['request.path.startsWith("/bulk/${i}/admin") && request.headers["x-role"] != "admin"']\n`));
    }
    out.set(`bulk-${f}.yaml`, parts.join(''));
  }
  return out;
}

describe('a large valid config written while serving (--workers 1)', () => {
  let echo: EchoServer;
  let gw: HostileGateway;
  before(async () => {
    echo = await startEchoServer('echo');
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}') + service('echo', echo) + prefixRoute('r', '/x', 'echo');
    gw = await startHostileGateway(yaml, { workers: 1 });
    await gw.waitFor('the route to serve', async () => (await gw.request({ path: '/x' })).status === 200);
  });
  after(async () => { await gw?.close(); await echo?.close(); });

  it('is translated off the serving event loop and compiled in slices: requests stay prompt, then the new routes serve', async (t) => {
    const routes = 10 * 1_000;
    // Written under a dot-folder (the source skips those), then renamed in: one snapshot, not six.
    const staging = join(gw.configDir, '.staging');
    mkdirSync(staging);
    for (const [name, text] of bulkRouteFiles(10, routes / 10)) writeFileSync(join(staging, name), text);
    const last = `/bulk/${routes - 1}/x`;
    const report = await probeWhile(async () => {
      renameSync(staging, join(gw.configDir, 'bulk'));
      await gw.waitFor('the new routes to serve', async () => (await gw.request({ path: last })).status === 200, 30_000);
    }, async () => {
      const res = await gw.request({ path: '/x' });
      assert.equal(res.status, 200);
    }, { maxMs: 35_000 });
    assert.equal(report.hostile.status, 'fulfilled', String((report.hostile as PromiseRejectedResult).reason));
    t.diagnostic(`worst probe ${report.worstProbeMs.toFixed(0)} ms over ${report.probes} probes`);
    assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${report.worstProbeMs.toFixed(0)} ms over ${report.probes} probes`);
    // The policies came with the routes.
    assert.equal((await gw.request({ path: `/bulk/${routes - 1}/admin`, headers: { 'x-role': 'guest' } })).status, 403);
    assert.equal((await gw.request({ path: `/bulk/${routes - 1}/admin`, headers: { 'x-role': 'admin' } })).status, 200);
  });
});

/** The children of `pid` (the cluster's workers, plus nothing else: the CLI forks no other process). */
function childPids(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

describe('cluster watchdog', () => {
  let dir: string;
  let echo: EchoServer;
  let gw: GatewayProcess;
  let port: number;
  before(async () => {
    echo = await startEchoServer('echo');
    port = await freePort();
    dir = tempDir('watchdog');
    writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port }]) + service('echo', echo) + prefixRoute('r', '/', 'echo'));
    // Later flags win: two workers and a short stall timeout so the test stays short.
    gw = await startGatewayProcess(dir, ['--workers', '2', '--worker-stall-timeout', '1']);
    await gw.waitReady();
  });
  after(async () => { await gw?.stop(); await echo?.close(); rmSync(dir, { recursive: true, force: true }); });

  it('kills and restarts a worker whose event loop stops, and counts it as stalled', async () => {
    const primary = gw.child.pid ?? assert.fail('no pid');
    await eventually(async () => (childPids(primary).length === 2 ? true : undefined), 'two workers');
    const [stuck] = childPids(primary);
    // A stopped process runs no event loop: the same silence as a worker stuck in a loop.
    process.kill(stuck, 'SIGSTOP');
    const metrics = await eventually(async () => {
      const res = await request({ port: gw.metricsPort, path: '/metrics' });
      return /switchboard_worker_restarts_total\{reason="stalled"\} 1\b/.test(res.body) ? res.body : undefined;
    }, 'the stalled restart in /metrics', 15_000);
    assert.match(metrics, /switchboard_worker_restarts_total\{reason="crashed"\} 0\b/);
    await eventually(async () => {
      const now = childPids(primary);
      return now.length === 2 && !now.includes(stuck) ? true : undefined;
    }, 'a replacement worker', 15_000);
    await gw.waitForLog((line) => line.msg === 'proxy worker event loop stalled; killing and restarting it' && line.pid === stuck);
    // Both workers serve again.
    for (let i = 0; i < 6; i++) assert.equal((await request({ port, path: '/x' })).status, 200);
  });
});
