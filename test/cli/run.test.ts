import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startEchoServer } from '../../examples/quickstart/echo-server.ts';
import { backendYaml, eventually, freePort, gatewayYaml, replaceFile, request, routeYaml, startGatewayProcess, tempDir, type GatewayProcess } from './harness.ts';

interface Echo { path: string; headers: Record<string, string> }

describe('switchboard run (one process)', () => {
  let upstream: http.Server;
  let upstreamPort: number;
  let dir: string;
  let gatewayPort: number;
  let gateway: GatewayProcess;

  before(async () => {
    ({ server: upstream, port: upstreamPort } = await startEchoServer(0));
    dir = tempDir('run');
    gatewayPort = await freePort();
    fs.writeFileSync(path.join(dir, 'gateway.yaml'), gatewayYaml(gatewayPort));
    fs.writeFileSync(path.join(dir, 'backend.yaml'), backendYaml(upstreamPort));
    fs.writeFileSync(path.join(dir, 'route.yaml'), routeYaml('one'));
    gateway = await startGatewayProcess(dir);
    await gateway.waitReady();
  });

  after(async () => {
    if (gateway.child.exitCode === null) await gateway.stop('SIGKILL');
    upstream.close();
    upstream.closeAllConnections();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the configured route and exposes config, status and metrics', async () => {
    const res = await request({ port: gatewayPort, path: '/hello' });
    assert.equal(res.status, 200);
    const echo = JSON.parse(res.body) as Echo;
    assert.equal(echo.path, '/hello');
    assert.equal(echo.headers['x-generation'], 'one');

    const dump = JSON.parse((await request({ port: gateway.adminPort, path: '/config_dump' })).body) as { version: string; binds: { port: number }[] };
    assert.deepEqual(dump.binds.map((b) => b.port), [gatewayPort]);
    const status = JSON.parse((await request({ port: gateway.adminPort, path: '/status' })).body) as { items: { kind: string; metadata: { name: string } }[] };
    assert.deepEqual(status.items.map((i) => `${i.kind}/${i.metadata.name}`).sort(), ['Gateway/gw', 'GatewayClass/switchboard', 'HTTPRoute/echo', 'ProxyBackend/echo']);

    const metrics = (await request({ port: gateway.metricsPort, path: '/metrics' })).body;
    assert.match(metrics, new RegExp(`^switchboard_config_version_info\\{version="${dump.version}"\\} 1$`, 'm'));
    assert.match(metrics, /^switchboard_config_reloads_total\{result="success"\} 1$/m);
    assert.match(metrics, /^switchboard_source_errors 0$/m);
    assert.match(metrics, /^process_cpu_user_seconds_total /m);
  });

  it('applies an edited file, and keeps serving the last good config when a file breaks', async () => {
    replaceFile(path.join(dir, 'route.yaml'), routeYaml('two'));
    await eventually(async () => {
      const res = await request({ port: gatewayPort, path: '/x' });
      return (JSON.parse(res.body) as Echo).headers['x-generation'] === 'two' ? true : undefined;
    }, 'the edited route to be served');

    const broken = path.join(dir, 'route.yaml');
    replaceFile(broken, `${routeYaml('three')}  oops: [unclosed\n`);
    const logged = await gateway.waitForLog((l) => l.file === broken && typeof l.msg === 'string' && l.msg.startsWith('YAML syntax error'));
    assert.equal(typeof logged.line, 'number');
    await gateway.waitForLog((l) => l.file === broken && l.keptObjects === 1);

    const res = await request({ port: gatewayPort, path: '/still' });
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.body) as Echo).headers['x-generation'], 'two', 'the broken file still contributes its last good route');
    const metrics = await eventually(async () => {
      const text = (await request({ port: gateway.metricsPort, path: '/metrics' })).body;
      return /^switchboard_source_errors 1$/m.test(text) ? text : undefined;
    }, 'the source error gauge');
    assert.match(metrics, /^switchboard_config_reloads_total\{result="error"\} [1-9]/m);
  });

  it('drains an in-flight request on SIGTERM and exits 0', async () => {
    replaceFile(path.join(dir, 'route.yaml'), routeYaml('four'));
    await eventually(async () => ((JSON.parse((await request({ port: gatewayPort })).body) as Echo).headers['x-generation'] === 'four' ? true : undefined), 'the fixed route');

    const slow = request({ port: gatewayPort, path: '/slow?delay=700' });
    await eventually(async () => /^switchboard_active_connections [1-9]/m.test((await request({ port: gateway.metricsPort, path: '/metrics' })).body) ? true : undefined, 'the slow request to be in flight');
    const code = await gateway.stop('SIGTERM');
    const res = await slow;
    assert.equal(res.status, 200, 'the in-flight request finished');
    assert.equal(code, 0);
    assert.ok(gateway.logs().some((l) => l.msg === 'shut down cleanly'));
    await assert.rejects(request({ port: gatewayPort }), /ECONNREFUSED/);
  });
});
