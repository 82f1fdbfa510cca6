import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../api/gateway/object.ts';
import { gatewayLikeParent, parentTier, routeParents, TIER_GATEWAY, TIER_LISTENER_SET } from './proxy-model-attach.ts';

const route = (parentRefs: object[]): KubeObject => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'apps' }, spec: { parentRefs } }) as KubeObject;
const model = (parentRefs: object[], namespace = 'apps'): KubeObject => ({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyModel', metadata: { name: 'm', namespace }, spec: { parentRefs } }) as KubeObject;
const GW = 'gateway.networking.k8s.io';

describe('a ProxyModel reaching a models rule through its route\'s Gateway or ListenerSet', () => {
  const rows: { name: string; route: object[]; model: object[]; modelNamespace?: string; tier: number | undefined }[] = [
    { name: 'Gateway parent, route on the whole Gateway', route: [{ name: 'gw' }], model: [{ group: GW, kind: 'Gateway', name: 'gw' }], tier: TIER_GATEWAY },
    { name: 'a model parentRef without kind is a Gateway (ParentReference default)', route: [{ name: 'gw' }], model: [{ name: 'gw' }], tier: TIER_GATEWAY },
    { name: 'Gateway parent, route through one listener', route: [{ name: 'gw', sectionName: 'http' }], model: [{ kind: 'Gateway', name: 'gw' }], tier: TIER_GATEWAY },
    { name: 'listener parent, route through the same listener', route: [{ name: 'gw', sectionName: 'admin' }], model: [{ kind: 'Gateway', name: 'gw', sectionName: 'admin' }], tier: TIER_GATEWAY },
    { name: 'listener parent, route on the whole Gateway: not reached', route: [{ name: 'gw' }], model: [{ kind: 'Gateway', name: 'gw', sectionName: 'admin' }], tier: undefined },
    { name: 'listener parent, route through another listener: not reached', route: [{ name: 'gw', sectionName: 'http' }], model: [{ kind: 'Gateway', name: 'gw', sectionName: 'admin' }], tier: undefined },
    { name: 'another Gateway: not reached', route: [{ name: 'gw' }], model: [{ kind: 'Gateway', name: 'other' }], tier: undefined },
    { name: 'the same name in another namespace: not reached', route: [{ name: 'gw' }], model: [{ kind: 'Gateway', name: 'gw' }], modelNamespace: 'team', tier: undefined },
    { name: 'a model in another namespace naming the route\'s Gateway namespace', route: [{ name: 'gw' }], model: [{ kind: 'Gateway', name: 'gw', namespace: 'apps' }], modelNamespace: 'team', tier: TIER_GATEWAY },
    { name: 'ListenerSet parent, route on the ListenerSet', route: [{ group: GW, kind: 'ListenerSet', name: 'team-a' }], model: [{ group: GW, kind: 'ListenerSet', name: 'team-a' }], tier: TIER_LISTENER_SET },
    { name: 'Gateway parent, route only on one of its ListenerSets: not reached', route: [{ kind: 'ListenerSet', name: 'team-a' }], model: [{ kind: 'Gateway', name: 'gw' }], tier: undefined },
    { name: 'both a Gateway and a ListenerSet parent: the nearer', route: [{ name: 'gw' }, { kind: 'ListenerSet', name: 'team-a' }], model: [{ kind: 'Gateway', name: 'gw' }, { kind: 'ListenerSet', name: 'team-a' }], tier: TIER_LISTENER_SET },
    { name: 'an HTTPRoute parent is not a Gateway-like one', route: [{ name: 'gw' }], model: [{ kind: 'HTTPRoute', name: 'r' }], tier: undefined },
  ];
  for (const row of rows) {
    it(row.name, () => assert.equal(parentTier(model(row.model, row.modelNamespace), routeParents(route(row.route))), row.tier));
  }

  it('reads a parentRef with its defaults', () => {
    assert.deepEqual(gatewayLikeParent({ name: 'gw' }, 'apps'), { group: GW, kind: 'Gateway', namespace: 'apps', name: 'gw' });
    assert.equal(gatewayLikeParent({ kind: 'Service', name: 'x' }, 'apps'), undefined);
  });
});
