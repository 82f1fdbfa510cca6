/**
 * Two controller replicas on one cluster: both translate and serve, only the Lease holder writes
 * status; when it goes away the other takes over and writes what changed meanwhile.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseControllerArgs, type ControllerOptions } from '../../src/cli/commands/controller-args.ts';
import { startController, type RunningController } from '../../src/cli/commands/controller.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { gatewayClass } from '../support/manifests.ts';
import { parseAllDocuments } from 'yaml';
import { FakeApiServer } from './fake-apiserver.ts';

const GW = 'gateway.networking.k8s.io/v1';

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('controller replicas', () => {
  let server: FakeApiServer;
  const replicas: RunningController[] = [];
  const start = (): Promise<RunningController> => {
    const options = parseControllerArgs(['--health-address', '127.0.0.1:0', '--metrics-address', '127.0.0.1:0', '--admin-address', '127.0.0.1:0', '--xds-address', '127.0.0.1:0', '--xds-mode', 'plaintext', '--leader-election-namespace', 'sys'], {}) as ControllerOptions;
    return startController(options, { kubeConfig: server.kubeConfig(), logger: silentLogger, lease: { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 50 } });
  };
  const gatewayGeneration = (): number | undefined => {
    const status = server.get(GW, 'Gateway', 'gw', 'apps')?.status as { conditions?: { type: string; observedGeneration?: number }[] } | undefined;
    return status?.conditions?.find((c) => c.type === 'Accepted')?.observedGeneration;
  };

  before(async () => {
    server = await FakeApiServer.start();
    for (const doc of parseAllDocuments(gatewayClass())) server.put(doc.toJS() as Record<string, unknown>);
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps' }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 18080, protocol: 'HTTP' }] } });
  });
  after(async () => {
    for (const replica of replicas) await replica.stop().catch(() => {});
    await server.close();
  });

  it('only the leader writes status; the follower takes over when the leader stops', async () => {
    const a = await start();
    replicas.push(a);
    await until(() => a.isLeader(), 'a to lead');
    const b = await start();
    replicas.push(b);
    assert.equal(b.isReady(), true, 'a follower translates and serves too');
    assert.ok(b.gateway.config(), 'the follower has the config');
    await until(() => gatewayGeneration() === 1, 'status from the leader');

    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps' }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 18081, protocol: 'HTTP' }] } });
    await until(() => gatewayGeneration() === 2, 'the leader to write generation 2');
    await b.statusWriter.flushed();
    assert.equal(b.isLeader(), false);
    assert.equal(b.statusWriter.writes, 0, 'the follower wrote nothing');

    await a.stop();
    replicas.shift();
    await until(() => b.isLeader(), 'b to take over');
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps' }, spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: 18082, protocol: 'HTTP' }] } });
    await until(() => gatewayGeneration() === 3, 'the new leader to write generation 3');
    assert.ok(b.statusWriter.writes > 0);
  });
});
