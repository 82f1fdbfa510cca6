/** The basics: a route forwards to its Service, the Gateway and route report honest status. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { conditionOf, routeParentConditions, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

describe('simple routing', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('infra-backend');
    gw = await startGateway(gatewayClass() + gateway('same-namespace', [{ name: 'http', port: 80 }]) + service('infra-backend', echo) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: basic, namespace: default }
spec:
  parentRefs: [{ name: same-namespace }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /app } }]
      backendRefs: [{ name: infra-backend, port: 8080 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: foreign, namespace: default }
spec:
  gatewayClassName: someone-else
  listeners: [{ name: http, port: 9090, protocol: HTTP }]
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  it('applies the config without errors', () => {
    assert.deepEqual(gw.applyErrors, []);
  });

  it('forwards method, path, query, Host and body to the backend', async () => {
    const res = await gw.request(80, { path: '/app/items?limit=2', host: 'example.com', method: 'POST', body: 'payload' });
    assert.equal(res.status, 200);
    const seen = res.echo();
    assert.equal(seen.server, 'infra-backend');
    assert.equal(seen.method, 'POST');
    assert.equal(seen.path, '/app/items');
    assert.deepEqual(seen.query, { limit: '2' });
    assert.equal(seen.host, 'example.com');
    assert.equal(seen.bodyLength, 7);
  });

  it('answers 404 for a path no route matches', async () => {
    const res = await gw.request(80, { path: '/elsewhere', host: 'example.com' });
    assert.equal(res.status, 404);
    assert.equal(echo.seen.filter((s) => s.path === '/elsewhere').length, 0);
  });

  it('reports the Gateway Accepted and Programmed with one attached route', () => {
    const status = gw.statusOf('Gateway', 'same-namespace');
    assert.equal(conditionOf(status.conditions, 'Accepted')?.status, 'True');
    assert.equal(conditionOf(status.conditions, 'Programmed')?.status, 'True');
    const listeners = status.listeners as { name: string; attachedRoutes: number }[];
    assert.equal(listeners.find((l) => l.name === 'http')?.attachedRoutes, 1);
  });

  it('reports the route Accepted with resolved refs', () => {
    const conditions = routeParentConditions(gw.statusOf('HTTPRoute', 'basic'));
    assert.equal(conditionOf(conditions, 'Accepted')?.status, 'True');
    assert.equal(conditionOf(conditions, 'ResolvedRefs')?.status, 'True');
  });

  it('does not claim a Gateway of another class', () => {
    assert.equal(gw.statuses().some((s) => s.kind === 'Gateway' && s.metadata.name === 'foreign'), false);
    assert.throws(() => gw.portOf(9090));
  });
});
