import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ObjectStatus } from '../../api/gateway/object.ts';
import { silentLogger } from '../../common/logger.ts';
import { FakeApiServer } from '../../../test/kube/fake-apiserver.ts';
import { KubeClient } from './client.ts';
import { WATCHED_KINDS } from './kinds.ts';
import { KubeSource } from './kube-source.ts';
import { FIELD_MANAGER, KubeStatusWriter } from './status-writer.ts';

const GW = 'gateway.networking.k8s.io/v1';
const OURS = 'switchboard.dev/gateway-controller';

const routeStatus = (name: string, accepted: 'True' | 'False', reason = accepted === 'True' ? 'Accepted' : 'NotAllowedByListeners'): ObjectStatus => ({
  apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'apps' },
  status: { parents: [{ parentRef: { name: 'gw' }, controllerName: OURS, conditions: [{ type: 'Accepted', status: accepted, reason, message: '', observedGeneration: 1 }] }] },
});

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Parent = { controllerName: string; conditions: { type: string; status: string; lastTransitionTime: string }[] };
const parentsOf = (server: FakeApiServer, name: string): Parent[] => ((server.get(GW, 'HTTPRoute', name, 'apps')?.status as { parents?: Parent[] } | undefined)?.parents ?? []);

// Every row twice: with the source's replaced-copies log (what the controller wires: a flush
// looks up only statuses whose copy moved) and without it (every status's copy looked up).
for (const tracked of [true, false]) describe(`KubeStatusWriter against the fake API server (${tracked ? 'told which cluster copies were replaced' : 'looking up every copy'})`, () => {
  let server: FakeApiServer;
  let source: KubeSource;
  let client: KubeClient;
  const writer = (options: { leader?: () => boolean; now?: () => Date } = {}): KubeStatusWriter => new KubeStatusWriter({
    client, logger: silentLogger, controllerName: OURS, retryDelayMs: 20,
    observed: (...args) => source.observed(...args), isLeader: options.leader ?? (() => true), ...(options.now ? { now: options.now } : {}),
    ...(tracked ? { replaced: source.trackReplaced() } : {}),
  });

  before(async () => {
    server = await FakeApiServer.start();
    for (const name of ['r1', 'r2', 'r3', 'r4', 'r5']) server.put({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'apps' }, spec: { hostnames: [`${name}.example`] } });
    client = new KubeClient(server.kubeConfig());
    source = new KubeSource({ client, logger: silentLogger, kinds: WATCHED_KINDS.filter((k) => k.kind === 'HTTPRoute'), debounceMs: 10 });
    await source.start(() => {});
  });
  after(async () => {
    await source.stop();
    await server.close();
  });

  it('keeps the statuses it is given, stamped in place, not a stamped copy of each (they are its own: the translator thread\'s clones)', () => {
    const w = writer({ leader: () => false });
    const given = routeStatus('r4', 'True');
    w.update([given]);
    assert.equal(w.current()[0], given, 'one copy of each status on the serving thread');
    const condition = ((given.status as { parents: Parent[] }).parents[0]!.conditions[0])!;
    assert.ok(condition.lastTransitionTime, 'lastTransitionTime stamped into it');
  });

  it('stamps the statuses when they are first read, not in update() (which comes just before the config is published)', async () => {
    let stamped = 0;
    const w = writer({ leader: () => false, now: () => { stamped++; return new Date(); } });
    w.update([routeStatus('r4', 'True')]);
    assert.equal(stamped, 0, 'nothing done on the publishing path');
    assert.equal(w.current().length, 1);
    assert.equal(stamped, 1);
    w.update([routeStatus('r4', 'False')]);
    await w.flushed();
    assert.equal(stamped, 2, 'the flush after the turn stamps them on a non-leader too (the admin endpoint reads them)');
  });

  it('says once a burst of writes is confirmed (the controller\'s idle GC), not after a flush that wrote less', async () => {
    const calls: string[] = [];
    const make = (burstWrites: number): KubeStatusWriter => new KubeStatusWriter({
      client, logger: silentLogger, controllerName: OURS, retryDelayMs: 20, verifyAfterWriteMs: 20, onBurstConfirmed: () => calls.push('confirmed'), burstWrites,
      observed: (...args) => source.observed(...args), isLeader: () => true, ...(tracked ? { replaced: source.trackReplaced() } : {}),
    });
    // Objects of its own: the rows after this one expect r1–r5 as the rows before left them.
    const names = ['burst1', 'burst2', 'burst3'];
    for (const name of names) server.put({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'apps' }, spec: { hostnames: [`${name}.example`] } });
    await until(() => names.every((name) => source.observed(GW, 'HTTPRoute', name, 'apps') !== undefined), 'the source sees the routes');
    const small = make(3);
    small.update([routeStatus('burst1', 'False'), routeStatus('burst2', 'False')]);
    await until(() => small.writes === 2 && small.comparisons >= 4, 'two writes confirmed');
    await small.flushed();
    assert.deepEqual(calls, [], 'two writes are no burst');
    small.close();

    calls.length = 0;
    const burst = make(3);
    burst.update(names.map((name) => routeStatus(name, 'True')));
    await until(() => calls.length > 0, 'the burst confirmed');
    assert.equal(burst.writes, 3);
    await burst.flushed();
    assert.deepEqual(calls, ['confirmed'], 'once');
    burst.close();
  });

  it('compares what it wrote again once the watch brought it back, without waiting for the next update', async () => {
    const w = new KubeStatusWriter({
      client, logger: silentLogger, controllerName: OURS, retryDelayMs: 20, verifyAfterWriteMs: 20,
      observed: (...args) => source.observed(...args), isLeader: () => true,
    });
    const given = routeStatus('r5', 'True');
    w.update([given]);
    await w.flushed();
    assert.equal(w.writes, 1);
    assert.equal(w.comparisons, 1);
    await until(() => w.comparisons === 2, 'a comparison after the write came back');
    await w.flushed();
    w.update([given]);
    await w.flushed();
    assert.equal(w.comparisons, 2, 'found in step by the verifying flush: the next update compares nothing');
    assert.equal(w.writes, 1);
    w.close();
  });

  it('writes status through the status subresource with server-side apply, then not again while unchanged', async () => {
    const w = writer();
    w.update([routeStatus('r1', 'True')]);
    await w.flushed();
    assert.equal(w.writes, 1);
    const request = server.requests.findLast((r) => r.method === 'PATCH')!;
    assert.equal(request.path, '/apis/gateway.networking.k8s.io/v1/namespaces/apps/httproutes/r1/status');
    assert.equal(request.contentType, 'application/apply-patch+yaml');
    assert.equal(request.query.fieldManager, FIELD_MANAGER);
    const parents = parentsOf(server, 'r1');
    assert.equal(parents[0]!.conditions[0]!.status, 'True');
    assert.ok(parents[0]!.conditions[0]!.lastTransitionTime, 'lastTransitionTime is written');
    const managed = (server.get(GW, 'HTTPRoute', 'r1', 'apps')!.metadata as { managedFields: { manager: string; subresource?: string }[] }).managedFields;
    assert.ok(managed.some((m) => m.manager === FIELD_MANAGER && m.subresource === 'status'));

    await until(() => (source.observed(GW, 'HTTPRoute', 'r1', 'apps')?.status as object | undefined) !== undefined, 'the watch to see the status');
    w.update([routeStatus('r1', 'True')]);
    await w.flushed();
    assert.equal(w.writes, 1, 'an unchanged status is not written again');
    w.update([routeStatus('r1', 'False')]);
    await w.flushed();
    assert.equal(w.writes, 2);
    assert.equal(parentsOf(server, 'r1')[0]!.conditions[0]!.status, 'False');
  });

  it('a restarted controller keeps the cluster lastTransitionTime and writes nothing when nothing changed', async () => {
    const first = writer({ now: () => new Date('2026-01-01T00:00:00Z') });
    first.update([routeStatus('r2', 'True')]);
    await first.flushed();
    await until(() => source.observed(GW, 'HTTPRoute', 'r2', 'apps')?.status !== undefined, 'the watch to see the status');
    const restarted = writer({ now: () => new Date('2026-06-01T00:00:00Z') });
    restarted.update([routeStatus('r2', 'True')]);
    await restarted.flushed();
    assert.equal(restarted.writes, 0);
    assert.equal(parentsOf(server, 'r2')[0]!.conditions[0]!.lastTransitionTime, '2026-01-01T00:00:00.000Z');
  });

  it('writes only on the leader, and a new leader writes what differs', async () => {
    let leader = false;
    const w = writer({ leader: () => leader });
    w.update([routeStatus('r3', 'True')]);
    await w.flushed();
    assert.equal(w.writes, 0);
    assert.deepEqual(parentsOf(server, 'r3'), []);
    leader = true;
    w.resync();
    await w.flushed();
    assert.equal(w.writes, 1);
    assert.equal(parentsOf(server, 'r3').length, 1);
  });

  it('keeps another controller\'s parent entries and retries after a conflict', async () => {
    server.putStatus({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'r4', namespace: 'apps' }, status: { parents: [{ parentRef: { name: 'other-gw' }, controllerName: 'example.com/other', conditions: [] }] } }, 'other-controller');
    await until(() => source.observed(GW, 'HTTPRoute', 'r4', 'apps')?.status !== undefined, 'the watch to see the other status');
    server.failNext('PATCH', /\/r4\/status$/, 409);
    const w = writer();
    w.update([routeStatus('r4', 'True')]);
    await until(() => parentsOf(server, 'r4').length === 2, 'the retried write');
    assert.deepEqual(parentsOf(server, 'r4').map((p) => p.controllerName).sort(), ['example.com/other', OURS]);
    assert.ok(w.writes >= 2, 'the conflicting write was retried');
    w.close();
  });

  it('refuses a write computed against an outdated object (resourceVersion precondition)', async () => {
    const stale = server.get(GW, 'HTTPRoute', 'r1', 'apps')!;
    server.put({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'r1', namespace: 'apps' }, spec: { hostnames: ['moved.example'] } });
    await assert.rejects(
      client.request('PATCH', '/apis/gateway.networking.k8s.io/v1/namespaces/apps/httproutes/r1/status', {
        query: { fieldManager: FIELD_MANAGER, force: 'true' }, contentType: 'application/apply-patch+yaml',
        body: { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'r1', namespace: 'apps', resourceVersion: (stale.metadata as { resourceVersion: string }).resourceVersion }, status: {} },
      }),
      (err: { statusCode: number }) => err.statusCode === 409,
    );
  });

  it('a flush compares only the statuses that are new objects or whose object moved in the cluster', async () => {
    const names = ['c1', 'c2', 'c3', 'c4'];
    for (const name of names) server.put({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'apps' }, spec: { hostnames: [`${name}.example`] } });
    await until(() => names.every((name) => source.observed(GW, 'HTTPRoute', name, 'apps') !== undefined), 'the routes in the cache');
    const w = writer();
    const statuses = names.map((name) => routeStatus(name, 'True'));
    w.update(statuses);
    await w.flushed();
    // Each written status comes back as a watch event: compared once more against the new copy, then known in step.
    await until(() => names.every((name) => source.observed(GW, 'HTTPRoute', name, 'apps')?.status !== undefined), 'the written statuses in the cache');
    w.refresh();
    await w.flushed();
    const before = w.comparisons;
    w.refresh();
    await w.flushed();
    assert.equal(w.comparisons, before, 'the same status objects against the same cluster copies: nothing compared');
    w.update([statuses[0]!, statuses[1]!, statuses[2]!, routeStatus('c4', 'False')]);
    await w.flushed();
    assert.equal(w.comparisons, before + 1, 'one new status object: one comparison');
    await until(() => parentsOf(server, 'c4')[0]?.conditions[0]?.status === 'False', 'c4 written');
  });
  it('a cluster copy changed in place by the source (another writer\'s status) is compared again at the next flush and written again', async () => {
    server.put({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'clobbered', namespace: 'apps' }, spec: { hostnames: ['clobbered.example'] } });
    await until(() => source.observed(GW, 'HTTPRoute', 'clobbered', 'apps') !== undefined, 'the route in the cache');
    const w = writer();
    w.update([routeStatus('clobbered', 'True')]);
    await w.flushed();
    await until(() => parentsOf(server, 'clobbered').length === 1, 'our status written');
    await until(() => source.observed(GW, 'HTTPRoute', 'clobbered', 'apps')?.status !== undefined, 'the echo');
    w.refresh();
    await w.flushed();
    const compared = w.comparisons;
    server.putStatus({ ...server.get(GW, 'HTTPRoute', 'clobbered', 'apps')!, status: { parents: [] } });
    await until(() => ((source.observed(GW, 'HTTPRoute', 'clobbered', 'apps')?.status as { parents?: unknown[] } | undefined)?.parents ?? []).length === 0, 'the other writer\'s status in the cache');
    w.refresh();
    await w.flushed();
    assert.equal(w.comparisons, compared + 1, 'the same status object, the same copy, but a new resourceVersion: compared');
    // What was written is not remembered once the cluster agreed: the status is the controller's, written again.
    await until(() => parentsOf(server, 'clobbered').length === 1, 'our status written again');
  });

  it('a cluster copy replaced (another party changed the spec and cleared our status) is compared again and written again', async () => {
    server.put({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'respecced', namespace: 'apps' }, spec: { hostnames: ['respecced.example'] } });
    await until(() => source.observed(GW, 'HTTPRoute', 'respecced', 'apps') !== undefined, 'the route in the cache');
    const w = writer();
    w.update([routeStatus('respecced', 'True')]);
    await w.flushed();
    await until(() => parentsOf(server, 'respecced').length === 1, 'our status written');
    await until(() => source.observed(GW, 'HTTPRoute', 'respecced', 'apps')?.status !== undefined, 'the echo');
    w.refresh();
    await w.flushed();
    const compared = w.comparisons;
    const copy = source.observed(GW, 'HTTPRoute', 'respecced', 'apps');
    server.put({ ...server.get(GW, 'HTTPRoute', 'respecced', 'apps')!, spec: { hostnames: ['other.example'] }, status: { parents: [] } });
    await until(() => source.observed(GW, 'HTTPRoute', 'respecced', 'apps') !== copy, 'the new copy in the cache');
    w.refresh();
    await w.flushed();
    assert.equal(w.comparisons, compared + 1, 'the same status object, a new cluster copy: compared');
    await until(() => parentsOf(server, 'respecced').length === 1, 'our status written again');
  });
});
