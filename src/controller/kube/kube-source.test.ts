import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../common/logger.ts';
import { FakeApiServer } from '../../../test/kube/fake-apiserver.ts';
import { DEFAULT_RESOURCE_TYPES } from '../../../test/kube/fake-apiserver/resources.ts';
import type { SourceSnapshot } from '../sources/types.ts';
import { KubeClient } from './client.ts';
import { objectKeyOf } from '../translate/incremental.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import { KubeSource, kubeDelta, type KubeSourceOptions } from './kube-source.ts';

const GW = 'gateway.networking.k8s.io/v1';

const route = (name: string, namespace: string, hostname = `${name}.example`) => ({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace }, spec: { hostnames: [hostname] } });
const namespace = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Starts a KubeSource on `server`, recording every snapshot. */
async function watch(server: FakeApiServer, options: Partial<KubeSourceOptions> = {}): Promise<{ source: KubeSource; snapshots: SourceSnapshot[]; names: (kind: string) => string[] }> {
  const snapshots: SourceSnapshot[] = [];
  const source = new KubeSource({ client: new KubeClient(server.kubeConfig()), logger: silentLogger, debounceMs: 20, retryBaseMs: 20, ...options });
  await source.start((s) => snapshots.push(s));
  const names = (kind: string): string[] => snapshots.at(-1)!.objects.filter((o) => o.object.kind === kind).map((o) => `${o.object.metadata.namespace ?? ''}/${o.object.metadata.name}`).sort();
  return { source, snapshots, names };
}

describe('KubeSource against the fake API server', () => {
  let server: FakeApiServer;
  before(async () => {
    // No XListenerSet CRD in this cluster: an optional kind, so the source starts without it.
    server = await FakeApiServer.start({ types: DEFAULT_RESOURCE_TYPES.filter((t) => t.kind !== 'XListenerSet') });
    server.put(namespace('apps'));
    server.put({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'apps' }, spec: { ports: [{ port: 80 }] } });
    server.put(route('a', 'apps'));
  });
  after(async () => { await server.close(); });

  it('delivers a first snapshot with every kind listed, apiVersion/kind filled and managedFields dropped', async () => {
    const { source, snapshots } = await watch(server);
    try {
      assert.equal(snapshots.length, 1);
      const service = snapshots[0]!.objects.find((o) => o.object.kind === 'Service');
      assert.equal(service?.object.apiVersion, 'v1', 'list items of built-in kinds come without apiVersion; the source fills it');
      assert.equal((service?.object.metadata as { managedFields?: unknown }).managedFields, undefined);
      assert.ok(snapshots[0]!.objects.some((o) => o.object.kind === 'HTTPRoute' && o.object.metadata.name === 'a'));
    } finally {
      await source.stop();
    }
  });

  it('follows creates, edits and deletes, coalescing a burst into few snapshots', async () => {
    const { source, snapshots, names } = await watch(server);
    try {
      for (let i = 0; i < 40; i++) server.put(route(`burst-${i}`, 'apps'));
      await until(() => names('HTTPRoute').length === 41, 'the burst');
      assert.ok(snapshots.length <= 4, `40 creates became ${snapshots.length - 1} snapshots`);
      server.put(route('a', 'apps', 'changed.example'));
      await until(() => snapshots.at(-1)!.objects.some((o) => o.object.metadata.name === 'a' && JSON.stringify(o.object.spec).includes('changed.example')), 'the edit');
      for (let i = 0; i < 40; i++) server.remove(GW, 'HTTPRoute', `burst-${i}`, 'apps');
      await until(() => names('HTTPRoute').length === 1, 'the deletes');
    } finally {
      await source.stop();
    }
  });

  it('delivers a change after a quiet spell at once, and one right after it no sooner than debounceMs later', async () => {
    const debounceMs = 3000;
    const { source, snapshots } = await watch(server, { debounceMs });
    const hasHost = (host: string): boolean => snapshots.at(-1)!.objects.some((o) => o.object.metadata.name === 'a' && JSON.stringify(o.object.spec).includes(host));
    try {
      // The first snapshot was built at start: wait out its window, as a cluster at rest would.
      await new Promise((r) => setTimeout(r, debounceMs));
      server.put(route('a', 'apps', 'quiet.example'));
      await until(() => hasHost('quiet.example'), 'the edit after a quiet spell, well before the debounce', debounceMs / 2);
      const firstDelivered = performance.now();
      server.put(route('a', 'apps', 'second.example'));
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(!hasHost('second.example'), 'a change right after a snapshot waits for the debounce (bursts stay batched)');
      await until(() => hasHost('second.example'), 'the second edit', 2 * debounceMs);
      assert.ok(performance.now() - firstDelivered >= debounceMs - 50, 'at most one snapshot per debounceMs');
    } finally {
      await source.stop();
    }
  });

  it('re-lists after a 410 and sees what changed while the watch was down', async () => {
    const { source, names } = await watch(server);
    try {
      server.dropWatches();
      server.put(route('during-outage', 'apps'));
      server.remove(GW, 'HTTPRoute', 'a', 'apps');
      server.compact();
      await until(() => names('HTTPRoute').join() === 'apps/during-outage', 'the re-listed state');
    } finally {
      await source.stop();
      server.put(route('a', 'apps'));
      server.remove(GW, 'HTTPRoute', 'during-outage', 'apps');
    }
  });

  it('waits for a required kind whose list fails, retrying, before the first snapshot', async () => {
    server.failNext('GET', /^\/api\/v1\/services$/, 500, 3);
    const { source, snapshots } = await watch(server);
    try {
      assert.equal(snapshots.length, 1);
      assert.ok(snapshots[0]!.objects.some((o) => o.object.kind === 'Service'), 'the first snapshot has the Services');
      assert.equal(server.requests.filter((r) => r.path === '/api/v1/services' && r.query.watch === undefined).length >= 4, true);
    } finally {
      await source.stop();
    }
  });

  it('restarts a watch that failed with a server error', async () => {
    const { source, names } = await watch(server);
    try {
      server.failNext('GET', /\/httproutes$/, 500, 2);
      server.dropWatches();
      server.put(route('after-error', 'apps'));
      await until(() => names('HTTPRoute').includes('apps/after-error'), 'the change after the watch restarted');
    } finally {
      await source.stop();
      server.remove(GW, 'HTTPRoute', 'after-error', 'apps');
    }
  });

  it('ignores a status-only change (the status writer\'s own writes), not a spec or label change', async () => {
    const { source, snapshots } = await watch(server);
    try {
      const before = snapshots.length;
      server.putStatus({ ...route('a', 'apps'), status: { parents: [] } });
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(snapshots.length, before, 'no snapshot for a status write');
      assert.deepEqual(source.observed(GW, 'HTTPRoute', 'a', 'apps')?.status, { parents: [] }, 'the cache still holds the new status for the writer');
      server.put({ ...route('a', 'apps'), metadata: { name: 'a', namespace: 'apps', labels: { x: 'y' } } });
      await until(() => snapshots.length > before, 'a snapshot for a label change');
    } finally {
      await source.stop();
      server.put(route('a', 'apps'));
    }
  });

  it('hands over the object a status-only change replaced, the same object, in the snapshots after it', async () => {
    const { source, snapshots } = await watch(server);
    const routeA = (s: SourceSnapshot | undefined) => s?.objects.find((o) => o.object.kind === 'HTTPRoute' && o.object.metadata.name === 'a')?.object;
    try {
      const first = routeA(snapshots.at(-1));
      assert.ok(first);
      server.putStatus({ ...route('a', 'apps'), status: { parents: [{ parentRef: { name: 'gw' }, controllerName: 'x', conditions: [] }] } });
      await until(() => source.observed(GW, 'HTTPRoute', 'a', 'apps')?.status !== undefined, 'the status echo in the cache');
      // Another object's change brings a snapshot; route a's echo must not look like a change of a.
      const count = snapshots.length;
      server.put(route('echo-neighbour', 'apps'));
      await until(() => snapshots.length > count, 'the neighbour\'s snapshot');
      assert.equal(routeA(snapshots.at(-1)), first, 'route a is the object accepted before its status echo (the translator diffs by identity)');
      assert.equal(source.observed(GW, 'HTTPRoute', 'a', 'apps'), first, 'held once: the informer\'s cache holds that same object …');
      assert.deepEqual(first.status, { parents: [{ parentRef: { name: 'gw' }, controllerName: 'x', conditions: [] }] }, '… with the status written');
      server.put(route('a', 'apps', 'spec-changed.example'));
      await until(() => routeA(snapshots.at(-1)) !== first, 'a spec change hands over the new object');
      assert.match(JSON.stringify(routeA(snapshots.at(-1))?.spec), /spec-changed\.example/);
    } finally {
      await source.stop();
      server.remove(GW, 'HTTPRoute', 'echo-neighbour', 'apps');
      server.put(route('a', 'apps'));
    }
  });

  it('each snapshot\'s delta turns the previous snapshot into it (creates, edits, status echoes, deletes, a create and delete in one window)', async () => {
    const { source, snapshots } = await watch(server);
    const byKey = (snapshot: SourceSnapshot): Map<string, KubeObject> => new Map(snapshot.objects.map((o) => [objectKeyOf(o.object)!, o.object]));
    const steps: (() => void)[] = [
      () => server.put(route('d1', 'apps')),
      () => { server.put(route('d2', 'apps')); server.put(route('d3', 'apps')); },
      () => server.put(route('d1', 'apps', 'edited.example')),
      () => { server.putStatus({ ...route('d2', 'apps'), status: { parents: [] } }); server.put(route('d3', 'apps', 'again.example')); },
      () => { server.remove(GW, 'HTTPRoute', 'd1', 'apps'); server.put(route('d4', 'apps')); server.remove(GW, 'HTTPRoute', 'd4', 'apps'); server.put(route('d5', 'apps')); },
      () => { server.put({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'apps', labels: { v: '2' } }, spec: { ports: [{ port: 80 }] } }); server.remove(GW, 'HTTPRoute', 'd2', 'apps'); },
    ];
    try {
      assert.equal(kubeDelta(snapshots[0]!), undefined, 'the first snapshot is whole');
      for (const [i, step] of steps.entries()) {
        const count = snapshots.length;
        step();
        await until(() => snapshots.length > count, `the snapshot of step ${i}`);
        await new Promise((r) => setTimeout(r, 60)); // the rest of the step's events, if they were split
        for (let n = count; n < snapshots.length; n++) {
          const previous = byKey(snapshots[n - 1]!);
          const next = byKey(snapshots[n]!);
          const delta = kubeDelta(snapshots[n]!);
          assert.ok(delta, `step ${i}: a delta`);
          for (const key of delta.removed) previous.delete(key);
          for (const object of delta.upserted) previous.set(objectKeyOf(object)!, object);
          assert.deepEqual([...previous.keys()].sort(), [...next.keys()].sort(), `step ${i}: the same objects`);
          for (const [key, object] of next) assert.equal(previous.get(key), object, `step ${i}: ${key} is the same object`);
          assert.ok(delta.upserted.length + delta.removed.length <= 4, `step ${i}: only what changed (${delta.upserted.length} + ${delta.removed.length})`);
        }
      }
    } finally {
      await source.stop();
      for (const name of ['d3', 'd5']) server.remove(GW, 'HTTPRoute', name, 'apps');
      server.put({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'apps' }, spec: { ports: [{ port: 80 }] } });
    }
  });

  it('discoveryNamespaceSelectors: reads only selected namespaces and follows label changes', async () => {
    server.put(namespace('other'));
    server.put(route('r', 'other'));
    const { source, names, snapshots } = await watch(server, { namespaceSelectors: [{ matchLabels: { gateway: 'yes' } }] });
    try {
      assert.deepEqual(names('HTTPRoute'), []);
      assert.deepEqual(names('Namespace'), []);
      server.put(namespace('other', { gateway: 'yes' }));
      await until(() => names('HTTPRoute').join() === 'other/r', 'the newly selected namespace');
      assert.equal(kubeDelta(snapshots.at(-1)!), undefined, 'a Namespace change under selectors: taken whole (what is selected changed)');
      assert.deepEqual(names('Namespace'), ['/other']);
    } finally {
      await source.stop();
    }
  });

  it('stops delivering past maxObjects, keeping the last snapshot', async () => {
    const { source, snapshots } = await watch(server, { maxObjects: 50 });
    try {
      const before = snapshots.length;
      for (let i = 0; i < 60; i++) server.put(route(`many-${i}`, 'apps'));
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(snapshots.length, before, 'no snapshot over the bound');
      for (let i = 0; i < 60; i++) server.remove(GW, 'HTTPRoute', `many-${i}`, 'apps');
      await until(() => snapshots.length > before, 'snapshots again under the bound');
    } finally {
      await source.stop();
    }
  });
});
