/**
 * Frontend `connect.mode: Route` (issue 17 item 4) through a listening gateway: undici's
 * ProxyAgent (a real HTTP client that tunnels through an HTTP proxy with CONNECT, as curl -x does
 * for https://) sends its requests through the tunnel. CONNECT is routed by its authority like a
 * request to that host: to a Service endpoint, or through the dynamic forward proxy to an HTTPS
 * origin (TLS end to end). Route authorization applies to the CONNECT; a bind without the mode
 * still answers 405.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ProxyAgent, request as undiciRequest } from 'undici';
import { createCertificate } from '../support/certs.ts';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, routeTrafficPolicy, service } from '../support/manifests.ts';
import { rawConnect } from './proxy-clients.ts';

const CONNECT_ROUTE = `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: connect-route, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw, port: 80 }]
  frontend: { connect: { mode: Route } }
`;

function routes(): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: internal, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: proxy }]
  hostnames: [echo.internal]
  rules:
    - backendRefs: [{ name: echo, port: 8080 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: guarded, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: proxy }]
  hostnames: [guarded.internal]
  rules:
    - backendRefs: [{ name: echo, port: 8080 }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: egress, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: proxy }]
  hostnames: [localhost]
  rules:
    - backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: egress }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: egress }
spec:
  dynamicForwardProxy: { accessControl: { allowedHosts: [localhost], allowAddressClasses: [loopback] } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: plain, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: plain }]
  rules:
    - backendRefs: [{ name: echo, port: 8080 }]
`;
}

/** A route for `<name>.internal` to the echo Service with a ProxyPolicy `backend` on it. */
function serviceRouteWithBackend(name: string, backend: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: proxy }]
  hostnames: [${name}.internal]
  rules:
    - backendRefs: [{ name: echo, port: 8080 }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${name} }]
  backend: ${backend}
`;
}

/** An A2A backend (forwarded like a static host, not in-process) routed by `agent.internal`. */
function agentRoute(port: number): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: agent }
spec:
  a2a: { host: 127.0.0.1, port: ${port} }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: agent, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: proxy }]
  hostnames: [agent.internal]
  rules:
    - backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: agent }]
`;
}

describe('frontend CONNECT Route', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;
  let origin: https.Server;
  let originCa: string;
  let upstreamProxy: ConnectProxy;

  before(async () => {
    echo = await startEchoServer('echo');
    const cert = await createCertificate(['localhost']);
    originCa = cert.certPem;
    origin = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => res.end(`secure ${req.url ?? ''}`));
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    upstreamProxy = await startConnectProxy();
    gw = await startGateway(
      gatewayClass() + gateway('gw', [{ name: 'proxy', port: 80 }, { name: 'plain', port: 81 }]) + service('echo', echo) + CONNECT_ROUTE + routes() + agentRoute(echo.port) +
        serviceRouteWithBackend('chained', `{ tunnel: { url: '${upstreamProxy.url}' }, tcp: { connectTimeout: 2s } }`) +
        serviceRouteWithBackend('credentialed', '{ auth: { key: sk-never } }') +
        routeTrafficPolicy('who', 'guarded', `authorization: { action: Allow, policy: { matchExpressions: ['request.headers["x-user"] == "alice"'] } }`),
    );
  });
  after(async () => {
    await upstreamProxy?.close();
    await gw.close();
    await echo.close();
    origin.close();
  });

  it('tunnels an HTTP client to the Service the CONNECT authority routes to', async () => {
    const agent = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true });
    try {
      const answer = await undiciRequest('http://echo.internal/through?x=1', { dispatcher: agent });
      const seen = (await answer.body.json()) as { path: string; host: string; server: string };
      assert.equal(answer.statusCode, 200);
      assert.deepEqual([seen.server, seen.path, seen.host], ['echo', '/through', 'echo.internal']);
    } finally {
      await agent.close();
    }
  });

  it('tunnels to an A2A backend\'s host:port like a static host (A2A is not served in-process)', async () => {
    const agent = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true });
    try {
      const answer = await undiciRequest('http://agent.internal/raw', { dispatcher: agent });
      const seen = (await answer.body.json()) as { server: string; path: string };
      assert.deepEqual([answer.statusCode, seen.server, seen.path], [200, 'echo', '/raw']);
    } finally {
      await agent.close();
    }
  });

  it('the route\'s backend tcp and tunnel shape the tunnel (chained through an upstream CONNECT proxy); auth cannot apply to opaque bytes: 500, never connected', async () => {
    const agent = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true });
    try {
      const answer = await undiciRequest('http://chained.internal/chained', { dispatcher: agent });
      assert.equal(answer.statusCode, 200);
      assert.equal(((await answer.body.json()) as { path: string }).path, '/chained');
    } finally {
      await agent.close();
    }
    assert.ok(upstreamProxy.targets.includes(`127.0.0.1:${echo.port}`), upstreamProxy.targets.join(' '));
    const before = echo.seen.length;
    assert.match(await rawConnect(gw.portOf(80), 'credentialed.internal:80'), /^HTTP\/1\.1 500/);
    assert.equal(echo.seen.length, before);
  });

  it('applies route authorization to the CONNECT itself', async () => {
    const denied = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true });
    const allowed = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true, headers: { 'x-user': 'alice' } });
    try {
      await assert.rejects(undiciRequest('http://guarded.internal/', { dispatcher: denied }), /403/);
      const answer = await undiciRequest('http://guarded.internal/ok', { dispatcher: allowed });
      assert.equal(answer.statusCode, 200);
      await answer.body.dump();
    } finally {
      await denied.close();
      await allowed.close();
    }
  });

  it('reaches an HTTPS origin through the dynamic forward proxy, TLS end to end', async () => {
    const agent = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: true, requestTls: { ca: originCa } });
    try {
      const port = (origin.address() as AddressInfo).port;
      const answer = await undiciRequest(`https://localhost:${port}/deep`, { dispatcher: agent });
      assert.equal(answer.statusCode, 200);
      assert.equal(await answer.body.text(), 'secure /deep');
    } finally {
      await agent.close();
    }
  });

  it('refuses a CONNECT no route matches (404) and a malformed target (400)', async () => {
    assert.match(await rawConnect(gw.portOf(80), 'nowhere.internal:443'), /^HTTP\/1\.1 404/);
    assert.match(await rawConnect(gw.portOf(80), 'no-port.internal'), /^HTTP\/1\.1 400/);
  });

  it('a listener without the mode still answers 405', async () => {
    assert.match(await rawConnect(gw.portOf(81), 'echo.internal:80'), /^HTTP\/1\.1 405/);
  });
});
