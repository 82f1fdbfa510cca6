import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject, SourcedObject } from '../../api/gateway/object.ts';
import { silentLogger } from '../../common/logger.ts';
import type { ObjectSource, SourceSnapshot } from '../sources/types.ts';
import type { ObjectDelta } from '../translate/incremental.ts';
import type { KubeClient } from './client.ts';
import type { KubeSnapshot } from './kube-source.ts';
import { Provisioner } from './provision/provisioner.ts';
import { SessionKeySecrets } from './session-keys.ts';

const GW = 'gateway.networking.k8s.io/v1';
const route: KubeObject = { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'apps' } };
const gateway: KubeObject = { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'apps', uid: 'u1' }, spec: { gatewayClassName: 'switchboard' } };
const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'apps' } };

/** Delivers the snapshots it is given, in order, during start(). */
function replaying(snapshots: readonly SourceSnapshot[]): ObjectSource {
  return { start: (on) => { for (const s of snapshots) on(s); return Promise.resolve(); }, stop: () => Promise.resolve() };
}

const whole = (objects: readonly KubeObject[]): SourceSnapshot => ({ objects: objects.map((object): SourcedObject => ({ object })), problems: [] });
const withDelta = (objects: readonly KubeObject[], delta: ObjectDelta): KubeSnapshot => ({ ...whole(objects), delta });

interface Tap { tap(source: ObjectSource): ObjectSource; observe(objects: readonly SourcedObject[]): void }

const taps: { name: string; make: () => Tap; reads: KubeObject; readsRemovedKey: string }[] = [
  { name: 'session keys', make: () => new SessionKeySecrets({ client: {} as KubeClient, logger: silentLogger, controllerName: 'c', isLeader: () => false }), reads: gateway, readsRemovedKey: 'Secret/apps/s' },
  { name: 'provisioning', make: () => new Provisioner({ client: {} as KubeClient, logger: silentLogger, controllerName: 'c', isLeader: () => false, controllerUrl: 'http://c:9978', defaultTag: '1' }), reads: configMap, readsRemovedKey: 'ProxyParameters/apps/p' },
];

describe('session keys and provisioning skip snapshots whose delta touches none of their kinds', () => {
  for (const t of taps) {
    it(`${t.name}: a route edit is not observed; a change of a kind it reads, a removal of one, and a snapshot without a delta are`, async () => {
      const tap = t.make();
      const observed: number[] = [];
      let n = 0;
      const observe = tap.observe.bind(tap);
      tap.observe = (objects) => { observed.push(n); observe(objects); };
      const snapshots = [
        whole([route, gateway, configMap]),
        withDelta([route, gateway, configMap], { upserted: [route], removed: [] }),
        withDelta([route, gateway, configMap], { upserted: [], removed: ['HTTPRoute/apps/old'] }),
        withDelta([route, gateway, configMap], { upserted: [t.reads], removed: [] }),
        withDelta([route, gateway, configMap], { upserted: [], removed: [t.readsRemovedKey] }),
        whole([route, gateway, configMap]),
      ];
      const delivered: SourceSnapshot[] = [];
      await tap.tap({ start: (on) => replaying(snapshots).start((s) => { n = snapshots.indexOf(s); on(s); }), stop: () => Promise.resolve() }).start((s) => delivered.push(s));
      assert.deepEqual(observed, [0, 3, 4, 5]);
      assert.equal(delivered.length, snapshots.length, 'every snapshot is passed on');
    });
  }
});
