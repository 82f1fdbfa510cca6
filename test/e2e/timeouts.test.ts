/** Route timeouts: a request or backend request that outlives its timeout ends in 504. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

describe('timeouts', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('slow');
    gw = await startGateway(gatewayClass() + service('slow', echo) + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: timed, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /request-timeout } }]
      timeouts: { request: 200ms }
      backendRefs: [{ name: slow, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /backend-timeout } }]
      timeouts: { request: 5s, backendRequest: 200ms }
      backendRefs: [{ name: slow, port: 8080 }]
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const cases = [
    { path: '/request-timeout?delay=2000', status: 504 },
    { path: '/request-timeout', status: 200 },
    { path: '/backend-timeout?delay=2000', status: 504 },
    { path: '/backend-timeout', status: 200 },
  ];
  for (const c of cases) {
    it(`${c.path} → ${c.status}`, async () => {
      const res = await gw.request(80, { path: c.path });
      assert.equal(res.status, c.status);
    });
  }
});
