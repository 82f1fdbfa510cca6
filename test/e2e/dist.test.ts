/**
 * The production build (scripts/build.ts, issue 15) end to end: built once into a temporary folder
 * laid out as a deployment has it (dist/, package.json, production node_modules beside them), then
 * each command run from the bundle: `version`, `validate`, `run` serving a route and a route edit (one worker,
 * and two cluster workers: the proxy-worker entry), a file only the reference YAML parser reads
 * (parse.ts's lazy load, on the parser thread), tracing (a lazyModule and the OTLP exporter left in
 * node_modules), `controller` against the fake API server (the
 * translator thread's entry) and `proxy` fed by a remote controller. Also: what the bundle evaluates eagerly stays what
 * the sources load eagerly (the lazy loads are still lazy).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Metafile } from 'esbuild';
import { buildDist, WORKERS } from '../../scripts/build.ts';
import { startCli, type CliProcess } from '../support/cli.ts';
import { sendRequest } from '../support/client.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { closedPort } from '../support/fleet.ts';
import { modulesLoadedBy } from '../support/loaded-modules.ts';
import { gateway, gatewayClass, prefixRoute, service } from '../support/manifests.ts';
import { FakeApiServer } from '../kube/fake-apiserver.ts';
import { startControllerProcess } from '../kube/controller-process.ts';
import { startOtlpReceiver } from '../otlp/receiver.ts';
import { startController, startProxy, writeToken, type ProxyProcess, type TestController } from '../remote/harness.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

/**
 * The inputs an entry evaluates when it loads: its static imports, and the `require`s of packages'
 * CommonJS code (counted as run at load, which a conditional one may not be: stricter). Our own
 * `require`s (the lazy loads scripts/build.ts rewrites) and every `import()` run on their call.
 */
function eagerInputs(metafile: Metafile, entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const input = pending.pop()!;
    if (seen.has(input)) continue;
    seen.add(input);
    for (const imported of metafile.inputs[input]?.imports ?? []) {
      const runsAtLoad = imported.kind === 'import-statement' || (imported.kind === 'require-call' && input.startsWith('node_modules/'));
      if (runsAtLoad && !imported.external) pending.push(imported.path);
    }
  }
  return seen;
}

describe('the production build (dist/)', () => {
  let app: string;
  let cli: string;
  let metafile: Metafile;
  let echo: EchoServer;
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  before(async () => {
    app = mkdtempSync(join(tmpdir(), 'switchboard-dist-'));
    const started = performance.now();
    ({ metafile } = await buildDist(join(app, 'dist')));
    // Fast enough to build in a test and in a container image (~1–2 s quiet, more under load).
    assert.ok(performance.now() - started < 20_000, `the build took ${Math.round(performance.now() - started)} ms`);
    copyFileSync(join(REPO_ROOT, 'package.json'), join(app, 'package.json'));
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(app, 'node_modules'), 'dir');
    cli = join(app, 'dist', 'switchboard.mjs');
    echo = await startEchoServer('echo');
  });
  after(async () => {
    await echo?.close();
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('`version` prints the package version from package.json beside dist/', () => {
    const child = spawnSync(process.execPath, [cli, 'version'], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, `switchboard ${version} (node ${process.version})\n`);
  });

  it('`validate` checks a folder, plain YAML and not (the reference parser, loaded on first use)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-dist-validate-'));
    try {
      writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port: 8080 }]) + service('echo', echo));
      writeFileSync(join(dir, 'route.yaml'), prefixRoute('anchored', '/a', 'echo').replace('metadata:', 'x-base: &base { note: anchored }\nx-copy: *base\nmetadata:'));
      const valid = spawnSync(process.execPath, [cli, 'validate', '-f', dir], { encoding: 'utf8' });
      assert.equal(valid.status, 0, valid.stdout + valid.stderr);
      writeFileSync(join(dir, 'broken.yaml'), 'kind: [unclosed\n');
      const broken = spawnSync(process.execPath, [cli, 'validate', '-f', dir], { encoding: 'utf8' });
      assert.equal(broken.status, 1, broken.stdout + broken.stderr);
      assert.match(broken.stdout + broken.stderr, /broken\.yaml/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const workers of [1, 2]) {
    it(`\`run --workers ${workers}\` serves a route and a route edit`, async () => {
      const port = await closedPort();
      const dir = mkdtempSync(join(tmpdir(), 'switchboard-dist-run-'));
      let running: CliProcess | undefined;
      try {
        writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port }]) + service('echo', echo));
        writeFileSync(join(dir, 'route.yaml'), prefixRoute('first', '/first', 'echo'));
        running = await startCli(dir, { entry: cli, workers });
        await running.waitFor('the route to serve', async () => (await sendRequest(port, { path: '/first/x' })).status === 200, 30_000);
        assert.equal((await sendRequest(port, { path: '/first/x' })).echo().path, '/first/x');

        // An anchor and an alias: not plain YAML, so the parser thread loads the reference parser (parse.ts's lazy require).
        writeFileSync(join(dir, 'route.yaml'), prefixRoute('first', '/second', 'echo').replace('metadata:', 'x-base: &base { note: anchored }\nx-copy: *base\nmetadata:'));
        await running.waitFor('the edited route to serve', async () => (await sendRequest(port, { path: '/second/y' })).status === 200, 30_000);
        assert.equal((await sendRequest(port, { path: '/first/x' })).status, 404, 'the old path no longer routes');
        assert.equal(await running.stop(), 0, running.output());
      } finally {
        await running?.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('`run` with a tracing ProxyPolicy exports spans over OTLP/gRPC (a lazyModule, and an exporter package left in node_modules)', async () => {
    const receiver = await startOtlpReceiver('GRPC');
    const port = await closedPort();
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-dist-tracing-'));
    let running: CliProcess | undefined;
    try {
      writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port }]) + service('echo', echo) + prefixRoute('traced', '/traced', 'echo') + `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: tracing, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }]
  frontend:
    tracing: { url: ${receiver.url}, protocol: GRPC, randomSampling: "1.0" }
`);
      running = await startCli(dir, { entry: cli });
      await running.waitFor('the route to serve', async () => (await sendRequest(port, { path: '/traced' })).status === 200, 30_000);
      await receiver.waitForSpans((spans) => spans.length > 0, 15_000);
    } finally {
      await running?.stop();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`controller` watches the fake API server, gets ready and exits 0 on SIGTERM', async () => {
    const server = await FakeApiServer.start({ token: 'controller-token' });
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-dist-controller-'));
    try {
      const controller = await startControllerProcess(server, cli, dir);
      try {
        await controller.waitReady(30_000);
        const lease = server.get('coordination.k8s.io/v1', 'Lease', 'switchboard-controller', 'switchboard-system')?.spec as { holderIdentity?: string } | undefined;
        assert.match(lease?.holderIdentity ?? '', /^controller-0_/);
      } catch (err) {
        await controller.stop();
        throw err;
      }
      assert.equal(await controller.stop(), 0, controller.output());
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`proxy` serves what a remote controller sends it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-dist-proxy-'));
    let controller: TestController | undefined;
    let proxy: ProxyProcess | undefined;
    try {
      const port = await closedPort();
      writeFileSync(join(dir, 'gateway.yaml'), gatewayClass() + gateway('gw', [{ name: 'http', port }]) + service('echo', echo) + prefixRoute('remote', '/remote', 'echo'));
      controller = await startController(dir);
      proxy = await startProxy({ controller: `http://127.0.0.1:${controller.port}`, tokenFile: writeToken(dir, 'token-default'), cli });
      const deadline = Date.now() + 30_000;
      while ((await sendRequest(port, { path: '/remote/x' }).catch(() => undefined))?.status !== 200) {
        if (Date.now() > deadline) throw new Error(`the proxy did not serve the route:\n${proxy.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(await proxy.isReady());
      assert.equal(await proxy.stop(), 0, proxy.output());
    } finally {
      await proxy?.stop();
      await controller?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`proxy --help` and `controller --help` print their usage', () => {
    for (const command of ['proxy', 'controller']) {
      const child = spawnSync(process.execPath, [cli, command, '--help'], { encoding: 'utf8' });
      assert.equal(child.status, 0, child.stderr);
      assert.match(child.stdout, new RegExp(`Usage: switchboard ${command}`));
    }
  });

  it('each worker entry is its own bundle beside the CLI', () => {
    for (const name of Object.keys(WORKERS)) assert.ok(existsSync(join(app, 'dist', `${name}.mjs`)), name);
  });

  it('the lazy loads stay lazy: what an entry evaluates at load is what the sources load eagerly', () => {
    const cliEager = eagerInputs(metafile, 'bin/switchboard.js');
    // main.ts picks a command with import(): `version` evaluates no command's graph.
    assert.ok(!cliEager.has('src/cli/main.ts'), 'main.ts is its own chunk');
    const mainEager = eagerInputs(metafile, 'src/cli/main.ts');
    assert.deepEqual([...mainEager].filter((input) => /^src\/(proxy|controller)\/|^node_modules\//.test(input)), []);
    // run.ts starts the config thread before it imports the serving side (run-gateway.ts).
    assert.ok(!eagerInputs(metafile, 'src/cli/commands/run.ts').has('src/cli/commands/run-gateway.ts'));

    const serving = eagerInputs(metafile, 'src/cli/commands/run-gateway.ts');
    assert.ok(serving.has('src/proxy/runtime.ts'), 'the proxy is in the serving graph');
    assert.deepEqual([...serving].filter((input) => /@connectrpc|@bufbuild|\/ext\/gen\/|\/guardrails\/gen\/|@opentelemetry\/(sdk-|resources)/.test(input)), []);
    // ...and they are in the build, behind a require that runs on the first use.
    assert.ok(Object.keys(metafile.inputs).some((input) => input.includes('node_modules/@connectrpc/connect-node')), 'the gRPC stack is bundled');

    const parser = eagerInputs(metafile, WORKERS['parser-thread-worker']!);
    assert.ok(parser.has('src/controller/sources/file/parse.ts'));
    assert.deepEqual([...parser].filter((input) => input.includes('node_modules/yaml/')), [], 'yaml loads on the first file that is not plain YAML');
  });

  it('the serving side loads no package from node_modules when it starts (gpt-tokenizer and the OTLP exporters stay on first use)', () => {
    const chunk = Object.entries(metafile.outputs).find(([, output]) => Object.keys(output.inputs).includes('src/cli/commands/run-gateway.ts'));
    assert.ok(chunk, 'run-gateway.ts has a chunk of its own');
    const urls = modulesLoadedBy(resolve(REPO_ROOT, chunk[0]));
    assert.ok(urls.length > 0);
    assert.deepEqual(urls.filter((url) => url.includes('/node_modules/')), []);
  });
});
