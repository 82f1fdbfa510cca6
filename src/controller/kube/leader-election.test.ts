import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../common/logger.ts';
import { FakeApiServer } from '../../../test/kube/fake-apiserver.ts';
import { KubeClient } from './client.ts';
import { LeaderElector } from './leader-election.ts';

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('LeaderElector against the fake API server', () => {
  let server: FakeApiServer;
  before(async () => { server = await FakeApiServer.start(); });
  after(async () => { await server.close(); });

  let leaseName = 0;
  /** Two candidates for a fresh Lease, with a watchdog that fails the test if both ever lead at once. */
  function candidates(): { a: LeaderElector; b: LeaderElector; name: string; overlaps: () => number; stopWatching: () => void } {
    const name = `lease-${++leaseName}`;
    const client = new KubeClient(server.kubeConfig());
    const make = (identity: string): LeaderElector => new LeaderElector({
      client, logger: silentLogger, namespace: 'switchboard', name, identity, leaseDurationMs: 400, renewDeadlineMs: 250, retryPeriodMs: 40,
    });
    const a = make('a');
    const b = make('b');
    let both = 0;
    const watchdog = setInterval(() => { if (a.isLeader() && b.isLeader()) both++; }, 2);
    return { a, b, name, overlaps: () => both, stopWatching: () => clearInterval(watchdog) };
  }
  const holder = (name: string): unknown => (server.get('coordination.k8s.io/v1', 'Lease', name, 'switchboard')?.spec as { holderIdentity?: string }).holderIdentity;

  it('one of two candidates leads; a graceful stop hands over at once', async () => {
    const { a, b, name, overlaps, stopWatching } = candidates();
    await a.start();
    await b.start();
    assert.equal(a.isLeader(), true);
    assert.equal(b.isLeader(), false);
    assert.equal(holder(name), 'a');
    const handoverStart = Date.now();
    await a.stop();
    assert.equal(holder(name), '', 'the lease is released');
    await until(() => b.isLeader(), 'b to take over');
    assert.ok(Date.now() - handoverStart < 400, 'a released lease is taken before it would have expired');
    const lease = server.get('coordination.k8s.io/v1', 'Lease', name, 'switchboard')!.spec as { holderIdentity: string; leaseTransitions: number; renewTime: string };
    assert.equal(lease.holderIdentity, 'b');
    assert.equal(lease.leaseTransitions, 1);
    assert.match(lease.renewTime, /\.\d{6}Z$/, 'MicroTime format');
    await b.stop();
    stopWatching();
    assert.equal(overlaps(), 0);
  });

  it('after a leader crashes, the other takes over only once the lease has expired', async () => {
    const { a, b, name, overlaps, stopWatching } = candidates();
    await a.start();
    await b.start();
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(b.isLeader(), false, 'b does not take a lease that is being renewed');
    a.abandon();
    const crashedAt = Date.now();
    await until(() => b.isLeader(), 'b to take over');
    assert.ok(Date.now() - crashedAt >= 300, `b waited for the lease to expire (${Date.now() - crashedAt} ms)`);
    assert.equal(holder(name), 'b');
    await b.stop();
    stopWatching();
    assert.equal(overlaps(), 0);
  });

  it('a leader that cannot renew steps down by its renew deadline', async () => {
    const { a, name, stopWatching } = candidates();
    await a.start();
    assert.equal(a.isLeader(), true);
    server.failNext('GET', new RegExp(`/leases/${name}$`), 500, 1000);
    const failingFrom = Date.now();
    await until(() => !a.isLeader(), 'a to step down');
    const after = Date.now() - failingFrom;
    assert.ok(after >= 200 && after < 400, `stepped down after ${after} ms: past the 250 ms deadline, before the 400 ms lease expiry`);
    server.clearFailures();
    a.abandon();
    stopWatching();
  });
});
