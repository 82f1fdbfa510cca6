/**
 * The fake API server, driven by the unmodified @kubernetes/client-node: if the real client can
 * list, watch, re-list after 410, apply and write status against it, Kubernetes mode's tests
 * exercise the same protocol a cluster would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CoordinationV1Api, CustomObjectsApi, KubernetesObjectApi, ListWatch, PatchStrategy, Watch,
  setHeaderOptions, type KubernetesObject, type KubernetesListObject,
} from '@kubernetes/client-node';
import { createCertificate } from '../support/certs.ts';
import { FakeApiServer } from './fake-apiserver.ts';

const GW = 'gateway.networking.k8s.io/v1';

function route(name: string, hostname: string): KubernetesObject & Record<string, unknown> {
  return { apiVersion: GW, kind: 'HTTPRoute', metadata: { name, namespace: 'apps' }, spec: { hostnames: [hostname] } };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A ListWatch on HTTPRoutes through the real client, listing through KubernetesObjectApi. */
function routeInformer(server: FakeApiServer): { informer: ListWatch<KubernetesObject>; events: string[]; lists: number[] } {
  const kc = server.kubeConfig();
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const events: string[] = [];
  const lists: number[] = [];
  const list = async (): Promise<KubernetesListObject<KubernetesObject>> => {
    lists.push(Date.now());
    return objects.list(GW, 'HTTPRoute');
  };
  const informer = new ListWatch<KubernetesObject>('/apis/gateway.networking.k8s.io/v1/httproutes', new Watch(kc), list, false);
  informer.on('add', (o) => events.push(`add ${o.metadata!.name!}`));
  informer.on('update', (o) => events.push(`update ${o.metadata!.name!}`));
  informer.on('delete', (o) => events.push(`delete ${o.metadata!.name!}`));
  return { informer, events, lists };
}

describe('fake API server with the real client', () => {
  let server: FakeApiServer;
  before(async () => { server = await FakeApiServer.start({ token: 'secret-token' }); });
  after(async () => { await server.close(); });

  it('lists, then watches adds, updates and deletes from the list resourceVersion', async () => {
    server.put(route('a', 'a.example'));
    const { informer, events } = routeInformer(server);
    await informer.start();
    try {
      assert.deepEqual(events, ['add a']);
      server.put(route('b', 'b.example'));
      server.put(route('a', 'a2.example'));
      server.remove(GW, 'HTTPRoute', 'b', 'apps');
      await until(() => events.length === 4, 'watch events');
      assert.deepEqual(events, ['add a', 'add b', 'update a', 'delete b']);
      assert.equal(informer.get('a', 'apps')?.metadata?.generation, 2);
    } finally {
      await informer.stop();
      server.remove(GW, 'HTTPRoute', 'a', 'apps');
    }
  });

  it('answers a watch from a compacted resourceVersion with 410 Expired, and the informer re-lists', async () => {
    server.put(route('c', 'c.example'));
    const { informer, events, lists } = routeInformer(server);
    await informer.start();
    try {
      assert.equal(lists.length, 1);
      // The watch breaks, a change happens meanwhile and the history is compacted past it: the
      // informer's resume point is gone, so the server answers 410 and the change must arrive
      // through a new list.
      server.dropWatches();
      server.put(route('d', 'd.example'));
      server.compact();
      await until(() => lists.length === 2, 'a re-list after 410');
      await until(() => events.includes('add d'), 'the change, through the re-list');
      const resumed = server.requests.filter((r) => r.query.watch === 'true' && r.query.resourceVersion === '2');
      assert.ok(resumed.length >= 1, 'the informer first tried to resume from its old resourceVersion');
    } finally {
      await informer.stop();
    }
  });

  it('sends the real 410 event: an ERROR carrying an Expired Status', async () => {
    server.compact();
    const response = await fetch(`${server.url}/apis/gateway.networking.k8s.io/v1/httproutes?watch=1&resourceVersion=1`, { headers: { authorization: 'Bearer secret-token' } });
    const event = JSON.parse((await response.text()).trim()) as { type: string; object: { code: number; reason: string } };
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');
  });

  it('sends bookmarks when asked', async () => {
    const bookmarks = await FakeApiServer.start({ bookmarkIntervalMs: 20 });
    try {
      const kc = bookmarks.kubeConfig();
      const seen: string[] = [];
      const controller = await new Watch(kc).watch('/api/v1/services', { allowWatchBookmarks: true, resourceVersion: bookmarks.resourceVersion }, (type) => seen.push(type), () => {});
      await until(() => seen.includes('BOOKMARK'), 'a bookmark');
      controller.abort();
    } finally {
      await bookmarks.close();
    }
  });

  it('refuses a request without the kubeconfig token', async () => {
    const response = await fetch(`${server.url}/api/v1/services`);
    assert.equal(response.status, 401);
  });

  it('server-side apply: creates, merges owned fields, reports a conflict, takes over with force, drops unapplied fields', async () => {
    const objects = KubernetesObjectApi.makeApiClient(server.kubeConfig());
    const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'apps' }, data: { a: '1', b: '2' } };
    await objects.patch(config, undefined, undefined, 'alice', undefined, PatchStrategy.ServerSideApply);
    // bob owns c; alice's later apply without b removes b but leaves bob's c.
    await objects.patch({ ...config, data: { c: '3' } }, undefined, undefined, 'bob', undefined, PatchStrategy.ServerSideApply);
    await objects.patch({ ...config, data: { a: '1' } }, undefined, undefined, 'alice', undefined, PatchStrategy.ServerSideApply);
    assert.deepEqual(server.get('v1', 'ConfigMap', 'cm', 'apps')?.data, { a: '1', c: '3' });

    await assert.rejects(
      objects.patch({ ...config, data: { c: 'mine' } }, undefined, undefined, 'alice', undefined, PatchStrategy.ServerSideApply),
      (err: { code: number; body: string }) => err.code === 409 && err.body.includes('conflict with \\"bob\\"'),
    );
    await objects.patch({ ...config, data: { a: '1', c: 'mine' } }, undefined, undefined, 'alice', true, PatchStrategy.ServerSideApply);
    const stored = server.get('v1', 'ConfigMap', 'cm', 'apps')!;
    assert.deepEqual(stored.data, { a: '1', c: 'mine' });
    const managers = (stored.metadata as { managedFields: { manager: string; fieldsV1: unknown }[] }).managedFields;
    assert.deepEqual(managers.map((m) => m.manager), ['alice'], 'bob lost c to the forced apply and owns nothing');
    assert.deepEqual(managers[0]!.fieldsV1, { 'f:data': { 'f:a': {}, 'f:c': {} } });
  });

  it('status subresource: apply writes only status, does not bump generation, and the main resource ignores status', async () => {
    server.put({ ...route('s', 's.example'), status: { ignored: true } });
    const before = server.get(GW, 'HTTPRoute', 's', 'apps')!;
    assert.equal(before.status, undefined, 'status on create is ignored');
    const custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const status = { parents: [{ controllerName: 'x/y', parentRef: { name: 'gw' }, conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '', observedGeneration: 1, lastTransitionTime: '2026-01-01T00:00:00Z' }] }] };
    await custom.patchNamespacedCustomObjectStatus(
      { group: 'gateway.networking.k8s.io', version: 'v1', namespace: 'apps', plural: 'httproutes', name: 's', body: { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 's', namespace: 'apps' }, spec: { hostnames: ['ignored.example'] }, status }, fieldManager: 'ctl', force: true },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    const afterApply = server.get(GW, 'HTTPRoute', 's', 'apps')!;
    assert.deepEqual(afterApply.status, status);
    assert.deepEqual(afterApply.spec, { hostnames: ['s.example'] }, 'the status subresource does not change spec');
    assert.equal((afterApply.metadata as { generation: number }).generation, 1);
    const managed = (afterApply.metadata as { managedFields: { manager: string; subresource?: string }[] }).managedFields;
    assert.ok(managed.some((m) => m.manager === 'ctl' && m.subresource === 'status'));
    server.put({ ...route('s', 's.example'), status: { overwritten: true } });
    assert.deepEqual(server.get(GW, 'HTTPRoute', 's', 'apps')!.status, status, 'an update of the main resource keeps status');
    await assert.rejects(
      custom.patchNamespacedCustomObjectStatus(
        { group: 'gateway.networking.k8s.io', version: 'v1', namespace: 'apps', plural: 'httproutes', name: 'missing', body: { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'missing', namespace: 'apps' }, status }, fieldManager: 'ctl', force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
      (err: { code: number }) => err.code === 404,
    );
  });

  it('leases: create, conflict on a stale resourceVersion, update', async () => {
    const leases = server.kubeConfig().makeApiClient(CoordinationV1Api);
    const created = await leases.createNamespacedLease({ namespace: 'sys', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } } });
    await assert.rejects(leases.createNamespacedLease({ namespace: 'sys', body: { metadata: { name: 'leader' }, spec: {} } }), (err: { code: number }) => err.code === 409);
    const updated = await leases.replaceNamespacedLease({ namespace: 'sys', name: 'leader', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } });
    assert.equal(updated.spec?.holderIdentity, 'b');
    await assert.rejects(leases.replaceNamespacedLease({ namespace: 'sys', name: 'leader', body: created }), (err: { code: number }) => err.code === 409);
  });

  it('token reviews answer from the table', async () => {
    server.tokens.set('proxy-token', { username: 'system:serviceaccount:apps:gw', groups: ['system:serviceaccounts'] });
    const objects = KubernetesObjectApi.makeApiClient(server.kubeConfig());
    const review = (token: string) => objects.create({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } } as KubernetesObject) as Promise<KubernetesObject & { status: { authenticated: boolean; user?: { username: string } } }>;
    const good = await review('proxy-token');
    assert.equal(good.status.authenticated, true);
    assert.equal(good.status.user?.username, 'system:serviceaccount:apps:gw');
    assert.equal((await review('other')).status.authenticated, false);
  });

  it('refuses selectors it does not implement instead of answering unfiltered', async () => {
    const response = await fetch(`${server.url}/api/v1/services?labelSelector=a%3Db`, { headers: { authorization: 'Bearer secret-token' } });
    assert.equal(response.status, 400);
  });
});

describe('fake API server over TLS', () => {
  it('serves the client through a kubeconfig that trusts its certificate', async () => {
    const cert = await createCertificate(['127.0.0.1', 'localhost']);
    const server = await FakeApiServer.start({ tls: cert });
    try {
      server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps', labels: { team: 'a' } } });
      const objects = KubernetesObjectApi.makeApiClient(server.kubeConfig());
      const list = await objects.list('v1', 'Namespace');
      assert.deepEqual(list.items.map((n) => n.metadata?.name), ['apps']);
    } finally {
      await server.close();
    }
  });
});
