/**
 * The data plane's failure statuses: no route 404, no ready endpoint 503, connection refused or
 * reset by the upstream 502.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { closedPort } from '../support/fleet.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

describe('error statuses', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('echo');
    const nothing = { host: '127.0.0.1', port: await closedPort() };
    gw = await startGateway(gatewayClass() + gateway('gw', [{ name: 'http', port: 80 }]) +
      service('echo', echo) +
      service('not-ready', nothing, { ready: false }) +
      service('refused', nothing) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: failures, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [errors.example.com]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /no-endpoints } }]
      backendRefs: [{ name: not-ready, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /refused } }]
      backendRefs: [{ name: refused, port: 8080 }]
    - matches: [{ path: { type: PathPrefix, value: /echo } }]
      backendRefs: [{ name: echo, port: 8080 }]
`);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
  });

  const cases = [
    { name: 'no route for the path', host: 'errors.example.com', path: '/nowhere', status: 404 },
    { name: 'no route for the host', host: 'unknown.example.com', path: '/echo', status: 404 },
    { name: 'no ready endpoint', host: 'errors.example.com', path: '/no-endpoints', status: 503 },
    { name: 'connection refused', host: 'errors.example.com', path: '/refused', status: 502 },
    { name: 'upstream resets the connection', host: 'errors.example.com', path: '/echo?reset=1', status: 502 },
    { name: 'upstream error statuses pass through unchanged', host: 'errors.example.com', path: '/echo?status=503', status: 503 },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.status}`, async () => {
      const res = await gw.request(80, { host: c.host, path: c.path });
      assert.equal(res.status, c.status);
    });
  }
});
