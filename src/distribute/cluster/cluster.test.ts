/**
 * The cluster distributor with real forked workers. This file is also the workers' module: in a
 * worker it runs `runWorker` with a small runtime double that serves each bind with a plain HTTP
 * server, which is enough to see configs arrive, ports shared, metrics aggregated and restarts.
 */
import assert from 'node:assert/strict';
import cluster from 'node:cluster';
import http from 'node:http';
import { describe, it } from 'node:test';
import { Counter, Gauge, Registry } from 'prom-client';
import { unusedPort } from '../../../test/support/ports.ts';
import { silentLogger } from '../../common/logger.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import { ClusterDistributor } from './primary.ts';
import { runWorker } from './worker.ts';

if (cluster.isWorker) {
  runWorker(({ registry }) => {
    const servers = new Map<number, http.Server>();
    const info = new Gauge({ name: 'fake_worker_info', help: 'worker and the version it serves', labelNames: ['pid', 'version'], registers: [registry] });
    let version = '';
    return {
      async apply(config: ProxyConfig) {
        version = config.version;
        info.reset();
        info.set({ pid: String(process.pid), version }, 1);
        for (const bind of config.binds) {
          if (servers.has(bind.port)) continue;
          const server = http.createServer((_req, res) => res.end(JSON.stringify({ pid: process.pid, version })));
          servers.set(bind.port, server);
          await new Promise<void>((resolve) => server.listen(bind.port, '127.0.0.1', resolve));
        }
        return { version, errors: [] };
      },
      ready: () => true,
      async close() {
        await Promise.all([...servers.values()].map((s) => new Promise((resolve) => s.close(resolve))));
      },
    };
  });
} else {
  describe('ClusterDistributor', () => {
    it('ships configs to every worker, shares the port, aggregates metrics and restarts a dead worker', async () => {
      const port = await unusedPort();
      const registry = new Registry();
      new Counter({ name: 'primary_only_total', help: 'a control-plane metric', registers: [registry] }).inc(3);
      const distributor = new ClusterDistributor({
        workers: 2, workerModule: import.meta.filename, settings: { logLevel: 'silent', logFormat: 'json' },
        logger: silentLogger, registry, restartDelayMs: 10,
      });
      await distributor.start();
      try {
        assert.equal(distributor.isReady(), false);
        const config = (version: string): ProxyConfig => ({ version, binds: [{ key: 'b', port, protocol: 'HTTP', listeners: [] }], routes: {}, backends: {} });
        assert.deepEqual(await distributor.publish(config('v1')), { version: 'v1', errors: [] });
        assert.equal(distributor.isReady(), true);
        assert.deepEqual(await distributor.publish(config('v2')), { version: 'v2', errors: [] });

        const answers = await Promise.all(Array.from({ length: 6 }, () => get(port)));
        assert.ok(answers.every((a) => a.version === 'v2'));
        const pids = workerPids(await distributor.metrics(), 'v2');
        assert.equal(pids.length, 2, 'both workers report v2 through the aggregated registry');
        assert.match(await distributor.metrics(), /^primary_only_total 3$/m);

        process.kill(pids[0], 'SIGKILL');
        let replaced: number[] = [];
        for (let attempt = 0; attempt < 100; attempt++) {
          replaced = workerPids(await distributor.metrics(), 'v2');
          if (replaced.length === 2 && !replaced.includes(pids[0])) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.equal(replaced.length, 2, 'the restarted worker got the current config');
        assert.ok(!replaced.includes(pids[0]));
        assert.equal((await get(port)).version, 'v2');
      } finally {
        await distributor.close(1000);
      }
      assert.equal(Object.keys(cluster.workers ?? {}).length, 0);
    });
  });
}

function workerPids(metricsText: string, version: string): number[] {
  return [...metricsText.matchAll(/^fake_worker_info\{pid="(\d+)",version="([^"]+)"\} 1$/gm)].filter((m) => m[2] === version).map((m) => Number(m[1]));
}

function get(port: number): Promise<{ pid: number; version: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve(JSON.parse(body) as { pid: number; version: string }));
    }).on('error', reject);
  });
}
