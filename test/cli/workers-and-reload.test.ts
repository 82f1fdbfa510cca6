import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startEchoServer } from '../../examples/quickstart/echo-server.ts';
import { backendYaml, eventually, freePort, gatewayYaml, replaceFile, request, routeYaml, startGatewayProcess, tempDir } from './harness.ts';

interface Echo { headers: Record<string, string> }

describe('switchboard run under load and with workers', () => {
  let upstream: http.Server;
  let upstreamPort: number;
  const dirs: string[] = [];

  before(async () => { ({ server: upstream, port: upstreamPort } = await startEchoServer(0)); });
  after(() => {
    upstream.close();
    upstream.closeAllConnections();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function configFolder(): Promise<{ dir: string; gatewayPort: number }> {
    const dir = tempDir('load');
    dirs.push(dir);
    const gatewayPort = await freePort();
    fs.writeFileSync(path.join(dir, 'gateway.yaml'), gatewayYaml(gatewayPort));
    fs.writeFileSync(path.join(dir, 'backend.yaml'), backendYaml(upstreamPort));
    fs.writeFileSync(path.join(dir, 'route.yaml'), routeYaml(0));
    return { dir, gatewayPort };
  }

  it('serves a steady client with zero failures while the route file is rewritten 100 times', async () => {
    const { dir, gatewayPort } = await configFolder();
    const gateway = await startGatewayProcess(dir);
    try {
      await gateway.waitReady();
      const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
      let writing = true;
      const failures: string[] = [];
      const generations = new Set<string>();
      let sent = 0;
      const client = async (): Promise<void> => {
        // Bounded: stops when the writer is done, and never runs past 5000 requests.
        while (writing && sent < 5000) {
          sent++;
          try {
            const res = await request({ port: gatewayPort, path: '/load', agent });
            if (res.status !== 200) failures.push(`status ${res.status}`);
            else generations.add((JSON.parse(res.body) as Echo).headers['x-generation']);
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
      };
      const clients = [client(), client()];
      for (let generation = 1; generation <= 100; generation++) {
        replaceFile(path.join(dir, 'route.yaml'), routeYaml(generation));
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await eventually(async () => ((JSON.parse((await request({ port: gatewayPort, agent })).body) as Echo).headers['x-generation'] === '100' ? true : undefined), 'the last generation');
      writing = false;
      await Promise.all(clients);
      agent.destroy();
      assert.deepEqual(failures, []);
      assert.ok(sent > 20, `the client kept sending (${sent} requests)`);
      assert.ok(generations.size >= 2, `requests were served across reloads (saw generations ${[...generations].join(', ')})`);
    } finally {
      await gateway.stop('SIGTERM');
    }
  });

  it('--workers 2 serves through both workers and aggregates their metrics', async () => {
    const { dir, gatewayPort } = await configFolder();
    const gateway = await startGatewayProcess(dir, ['--workers', '2']);
    try {
      await gateway.waitReady();
      // Readiness needs one listening worker; wait until both have applied the config.
      await eventually(async () => gateway.logs().filter((l) => l.msg === 'proxy config applied').length >= 2 ? true : undefined, 'both workers to apply the config');
      const count = 20;
      for (let i = 0; i < count; i++) assert.equal((await request({ port: gatewayPort, path: `/w${i}` })).status, 200);
      // Access log lines are buffered (written every 100 ms or per 8 KiB): wait for all of them.
      const servedBy = await eventually(async () => {
        const lines = gateway.logs().filter((l) => l.msg === 'request' && typeof l.path === 'string' && l.path.startsWith('/w'));
        return lines.length >= count ? new Set(lines.map((l) => l.worker)) : undefined;
      }, 'the access log lines of the requests');
      assert.equal(servedBy.size, 2, 'both workers served requests');

      const metrics = (await request({ port: gateway.metricsPort, path: '/metrics' })).body;
      const total = [...metrics.matchAll(/^switchboard_requests_total\{[^}]*route="default\/echo"[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      assert.equal(total, count, 'request counts of both workers are summed');
      assert.match(metrics, /^switchboard_config_reloads_total\{result="success"\} 1$/m, 'control-plane metrics come from the primary, once');
      assert.equal((metrics.match(/^# TYPE switchboard_requests_total counter$/gm) ?? []).length, 1);
      assert.equal(await gateway.stop('SIGTERM'), 0);
    } finally {
      if (gateway.child.exitCode === null) await gateway.stop('SIGKILL');
    }
  });
});
