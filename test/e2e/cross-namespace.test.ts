/**
 * A backendRef into another namespace needs a ReferenceGrant there; without one the route says
 * ResolvedRefs=False/RefNotPermitted and requests for that backend get 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { conditionOf, routeParentConditions, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

function crossNamespaceRoute(namespace: string, path: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: to-backends, namespace: ${namespace} }
spec:
  parentRefs: [{ name: gw, namespace: infra }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${path} } }]
      backendRefs: [{ name: echo, namespace: backends, port: 8080 }]
`;
}

describe('cross-namespace backend refs', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(gatewayClass() +
      gateway('gw', [{ name: 'http', port: 80, routesFrom: 'All' }], 'infra') +
      service('echo', echo, { namespace: 'backends' }) +
      crossNamespaceRoute('granted', '/granted') +
      crossNamespaceRoute('denied', '/denied') + `
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: { name: allow-granted, namespace: backends }
spec:
  from: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: granted }]
  to: [{ group: '', kind: Service }]
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  it('forwards when a ReferenceGrant allows the reference', async () => {
    const res = await gw.request(80, { path: '/granted' });
    assert.equal(res.status, 200);
    assert.equal(res.echo().server, 'echo');
    const resolved = conditionOf(routeParentConditions(gw.statusOf('HTTPRoute', 'to-backends', 'granted')), 'ResolvedRefs');
    assert.equal(resolved?.status, 'True');
  });

  it('answers 500 without a ReferenceGrant', async () => {
    const before = echo.seen.length;
    const res = await gw.request(80, { path: '/denied' });
    assert.equal(res.status, 500);
    assert.equal(echo.seen.length, before);
  });

  it('reports RefNotPermitted and still accepts the route', () => {
    const conditions = routeParentConditions(gw.statusOf('HTTPRoute', 'to-backends', 'denied'));
    assert.equal(conditionOf(conditions, 'ResolvedRefs')?.status, 'False');
    assert.equal(conditionOf(conditions, 'ResolvedRefs')?.reason, 'RefNotPermitted');
    assert.equal(conditionOf(conditions, 'Accepted')?.status, 'True');
  });
});
