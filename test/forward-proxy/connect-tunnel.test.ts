/**
 * Frontend `connect.mode: Tunnel` (issue 17 item 4): a CONNECT to `host:<Gateway port>` is
 * answered `200` and the tunnelled stream enters the bind of that Gateway port as a new
 * downstream connection. undici's ProxyAgent (CONNECT, then HTTP through the tunnel) is the
 * client; the inner bind's routes and their authorization apply to what comes through.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProxyAgent, request as undiciRequest } from 'undici';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, routeTrafficPolicy, service } from '../support/manifests.ts';
import { rawConnect } from './proxy-clients.ts';

const MANIFESTS = `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: connect-tunnel, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw, port: 80 }]
  frontend: { connect: { mode: Tunnel } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: inner, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: inner }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /open } }]
      backendRefs: [{ name: echo, port: 8080 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: guarded, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: inner }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /guarded } }]
      backendRefs: [{ name: echo, port: 8080 }]
`;

describe('frontend CONNECT Tunnel', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;
  let agent: ProxyAgent;

  before(async () => {
    echo = await startEchoServer('echo');
    gw = await startGateway(
      gatewayClass() + gateway('gw', [{ name: 'entry', port: 80 }, { name: 'inner', port: 8081 }]) + service('echo', echo) + MANIFESTS +
        routeTrafficPolicy('who', 'guarded', `authorization: { action: Allow, policy: { matchExpressions: ['request.headers["x-user"] == "alice"'] } }`),
    );
    agent = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true });
  });
  after(async () => {
    await agent.close();
    await gw.close();
    await echo.close();
  });

  it('feeds the tunnel to the bind of the CONNECT port: its routes serve the requests inside', async () => {
    const answer = await undiciRequest('http://inner.example:8081/open/a', { dispatcher: agent });
    const seen = (await answer.body.json()) as { path: string; server: string };
    assert.equal(answer.statusCode, 200);
    assert.deepEqual([seen.server, seen.path], ['echo', '/open/a']);
  });

  it("the inner bind's route authorization applies to requests through the tunnel", async () => {
    const denied = await undiciRequest('http://inner.example:8081/guarded', { dispatcher: agent });
    assert.equal(denied.statusCode, 403);
    await denied.body.dump();
    const allowed = await undiciRequest('http://inner.example:8081/guarded', { dispatcher: agent, headers: { 'x-user': 'alice' } });
    assert.equal(allowed.statusCode, 200);
    await allowed.body.dump();
  });

  it('a CONNECT to a port no bind serves is refused with 404', async () => {
    assert.match(await rawConnect(gw.portOf(80), 'inner.example:9999'), /^HTTP\/1\.1 404/);
  });
});
