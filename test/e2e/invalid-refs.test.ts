/**
 * Invalid backendRefs degrade only what they touch: the route stays Accepted, ResolvedRefs=False
 * names the reason, requests that pick the bad backend get 500 and the good backends keep serving.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { conditionOf, routeParentConditions, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

function route(name: string, path: string, backendRefs: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
      backendRefs: ${backendRefs}
`;
}

const MIXED_REQUESTS = 40;

describe('invalid backend refs', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }]) +
      route('missing-service', '/missing', '[{ name: does-not-exist, port: 8080 }]') +
      route('wrong-kind', '/kind', '[{ group: example.com, kind: Widget, name: echo, port: 8080 }]') +
      route('half-valid', '/mixed', '[{ name: echo, port: 8080, weight: 1 }, { name: does-not-exist, port: 8080, weight: 1 }]'));
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const statusCases = [
    { route: 'missing-service', reason: 'BackendNotFound', path: '/missing' },
    { route: 'wrong-kind', reason: 'InvalidKind', path: '/kind' },
  ];
  for (const c of statusCases) {
    it(`${c.route}: ResolvedRefs=False/${c.reason}, route still Accepted`, () => {
      const conditions = routeParentConditions(gw.statusOf('HTTPRoute', c.route));
      assert.equal(conditionOf(conditions, 'ResolvedRefs')?.status, 'False');
      assert.equal(conditionOf(conditions, 'ResolvedRefs')?.reason, c.reason);
      assert.equal(conditionOf(conditions, 'Accepted')?.status, 'True');
    });
    it(`${c.route}: requests get 500`, async () => {
      assert.equal((await gw.request(80, { path: c.path })).status, 500);
    });
  }

  it('splits between 500 for the invalid backend and 200 for the valid one', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < MIXED_REQUESTS && statuses.size < 2; i++) {
      statuses.add((await gw.request(80, { path: '/mixed' })).status);
    }
    assert.deepEqual([...statuses].sort(), [200, 500]);
  });
});
