import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../common/logger.ts';
import { FakeApiServer } from '../../../test/kube/fake-apiserver.ts';
import { KubeClient } from './client.ts';
import { WATCHED_KINDS } from './kinds.ts';
import { KubeSource } from './kube-source.ts';
import { MANAGED_BY_LABEL, SessionKeySecrets } from './session-keys.ts';

const GW = 'gateway.networking.k8s.io/v1';
const OURS = 'switchboard.dev/gateway-controller';
const KINDS = WATCHED_KINDS.filter((k) => ['GatewayClass', 'Gateway', 'Secret'].includes(k.kind));

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const keyOf = (server: FakeApiServer, name: string): string | undefined => {
  const data = server.get('v1', 'Secret', name, 'apps')?.data as Record<string, string> | undefined;
  return data?.key === undefined ? undefined : Buffer.from(data.key, 'base64').toString('utf8');
};
const posts = (server: FakeApiServer): number => server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/secrets')).length;

describe('SessionKeySecrets against the fake API server', () => {
  let server: FakeApiServer;
  let source: ReturnType<SessionKeySecrets['tap']>;
  let leader = true;
  let keys: SessionKeySecrets;

  beforeEach(async () => {
    leader = true;
    server = await FakeApiServer.start();
    server.put({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: OURS } });
    server.put({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'theirs' }, spec: { controllerName: 'example.com/other' } });
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps' }, spec: { gatewayClassName: 'switchboard', listeners: [] } });
    server.put({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'foreign', namespace: 'apps' }, spec: { gatewayClassName: 'theirs', listeners: [] } });
  });
  afterEach(async () => {
    await source.stop();
    await server.close();
  });

  async function start(retryMs = 10_000): Promise<void> {
    const client = new KubeClient(server.kubeConfig());
    let n = 0;
    keys = new SessionKeySecrets({ client, logger: silentLogger, controllerName: OURS, isLeader: () => leader, retryMs, randomKey: () => `${String(++n).padStart(2, '0')}`.repeat(32) });
    source = keys.tap(new KubeSource({ client, logger: silentLogger, kinds: KINDS, debounceMs: 10 }));
    await source.start(() => {});
  }

  it('creates <gateway>-session-key for a Gateway of our class: 64 hex, owned by the Gateway, labelled; none for another class', async () => {
    await start();
    await until(() => keyOf(server, 'gw-session-key') !== undefined, 'the Secret');
    const secret = server.get('v1', 'Secret', 'gw-session-key', 'apps')!;
    assert.match(keyOf(server, 'gw-session-key')!, /^[0-9a-f]{64}$/);
    const gateway = server.get(GW, 'Gateway', 'gw', 'apps')!;
    const metadata = secret.metadata as { ownerReferences: unknown[]; labels: Record<string, string> };
    assert.deepEqual(metadata.ownerReferences, [{ apiVersion: GW, kind: 'Gateway', name: 'gw', uid: (gateway.metadata as { uid: string }).uid }]);
    assert.equal(metadata.labels[MANAGED_BY_LABEL], 'switchboard');
    assert.equal(server.get('v1', 'Secret', 'foreign-session-key', 'apps'), undefined);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(posts(server), 1, 'created once, not once per snapshot');
  });

  it('never replaces an existing Secret, even one without a valid key', async () => {
    server.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gw-session-key', namespace: 'apps' }, data: { key: Buffer.from('not a key').toString('base64') } });
    await start();
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(keyOf(server, 'gw-session-key'), 'not a key');
    assert.equal(posts(server), 0);
  });

  it('creates nothing while another replica leads; on becoming leader, creates what is missing', async () => {
    leader = false;
    await start();
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(posts(server), 0);
    leader = true;
    keys.reconcile();
    await until(() => keyOf(server, 'gw-session-key') !== undefined, 'the Secret after leadership');
  });

  it('a deleted Secret (rotation) is created again with a new key', async () => {
    await start(50);
    await until(() => keyOf(server, 'gw-session-key') !== undefined, 'the first Secret');
    const first = keyOf(server, 'gw-session-key');
    server.remove('v1', 'Secret', 'gw-session-key', 'apps');
    await until(() => keyOf(server, 'gw-session-key') !== undefined && keyOf(server, 'gw-session-key') !== first, 'a new Secret');
  });

  it('a failed create is retried', async () => {
    server.failNext('POST', /\/secrets$/, 500);
    await start(50);
    await until(() => keyOf(server, 'gw-session-key') !== undefined, 'the Secret after a retry');
    assert.ok(posts(server) >= 2);
  });
});
