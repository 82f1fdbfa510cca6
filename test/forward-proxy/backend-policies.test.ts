/**
 * Backend policies on a dynamic forward proxy backend (issue 17 item 2), through a listening
 * gateway driven like curl drives a proxy: `tls` originates TLS to the destination with the
 * policy's CA, verified against the name the client asked for; `tunnel` chains through an upstream
 * CONNECT proxy (to the checked address); `auth` writes the backend credential; `transformation`
 * changes the request; `http.requestTimeout` bounds the wait for the answer. On a CONNECT tunnel
 * `tunnel` applies and a member that acts on HTTP or TLS fails closed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ProxyAgent, request as undiciRequest } from 'undici';
import { createCertificate } from '../support/certs.ts';
import { startConnectProxy, type ConnectProxy } from '../support/connect-proxy.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass } from '../support/manifests.ts';
import { rawConnect, viaProxy as send } from './proxy-clients.ts';

/** The client sends its own credential: a backend `auth` must replace it. */
const viaProxy = (port: number, target: string) => send(port, target, { headers: { authorization: 'Bearer client' } });

/** A forward proxy backend on listener `name` (its own port), with `backend` as its ProxyPolicy backend. */
function forwardWithPolicy(name: string, backend: string | undefined): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  dynamicForwardProxy: { accessControl: { allowedHosts: ['127.0.0.1', localhost], allowAddressClasses: [loopback] } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw, sectionName: ${name} }]
  rules:
    - backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }]
${backend === undefined ? '' : `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name} }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }]
  backend: ${backend}
`}`;
}

const LISTENERS = ['plain', 'tls', 'tunnel', 'auth', 'transform', 'timeout', 'connect-tls', 'connect-tunnel'];

describe('dynamic forward proxy: backend policies', () => {
  let echo: EchoServer;
  let origin: https.Server;
  let slow: http.Server;
  let proxy: ConnectProxy;
  let gw: GatewayHarness;
  const port = (name: string) => gw.portOf(8000 + LISTENERS.indexOf(name));

  before(async () => {
    echo = await startEchoServer('origin');
    proxy = await startConnectProxy();
    const cert = await createCertificate(['localhost']);
    origin = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => res.end(`secure ${req.url ?? ''}`));
    origin.listen(0, '127.0.0.1');
    slow = http.createServer((_req, res) => setTimeout(() => res.end('late'), 3000).unref());
    slow.listen(0, '127.0.0.1');
    await Promise.all([once(origin, 'listening'), once(slow, 'listening')]);
    gw = await startGateway(
      gatewayClass() + gateway('gw', LISTENERS.map((name, i) => ({ name, port: 8000 + i }))) + `
---
apiVersion: v1
kind: ConfigMap
metadata: { name: origin-ca, namespace: default }
data: { ca.crt: ${JSON.stringify(cert.certPem)} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: connect-route }
spec:
  targetRefs:
    - { group: gateway.networking.k8s.io, kind: Gateway, name: gw, port: 8006 }
    - { group: gateway.networking.k8s.io, kind: Gateway, name: gw, port: 8007 }
  frontend: { connect: { mode: Route } }
` +
        forwardWithPolicy('plain', undefined) +
        forwardWithPolicy('tls', `{ tls: { caCertificateRefs: [{ name: origin-ca }] } }`) +
        forwardWithPolicy('tunnel', `{ tunnel: { url: '${proxy.url}' } }`) +
        forwardWithPolicy('auth', `{ auth: { key: sk-forward } }`) +
        forwardWithPolicy('transform', `{ transformation: { request: { set: [{ name: x-btx, value: '"on"' }] } } }`) +
        forwardWithPolicy('timeout', `{ http: { requestTimeout: 300ms } }`) +
        forwardWithPolicy('connect-tls', `{ tls: { caCertificateRefs: [{ name: origin-ca }] } }`) +
        forwardWithPolicy('connect-tunnel', `{ tunnel: { url: '${proxy.url}' } }`),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
    await proxy?.close();
    origin?.close();
    slow?.closeAllConnections();
    slow?.close();
  });

  it('tls: originates TLS to the destination with the policy CA, the asked-for name verified; without it the plain request fails', async () => {
    const target = `http://localhost:${(origin.address() as AddressInfo).port}/over-tls`;
    const got = await viaProxy(port('tls'), target);
    assert.deepEqual([got.status, got.body], [200, 'secure /over-tls']);
    assert.equal((await viaProxy(port('plain'), target)).status, 502);
  });

  it('tunnel: the destination is reached through the upstream CONNECT proxy, at the checked address', async () => {
    const got = await viaProxy(port('tunnel'), `http://localhost:${echo.port}/chained`);
    assert.equal(got.status, 200, got.body);
    assert.equal((JSON.parse(got.body) as { path: string }).path, '/chained');
    assert.ok(proxy.targets.includes(`127.0.0.1:${echo.port}`), proxy.targets.join(' '));
  });

  it('auth: the backend credential replaces the client one', async () => {
    const got = await viaProxy(port('auth'), `http://127.0.0.1:${echo.port}/auth`);
    assert.equal((JSON.parse(got.body) as { headers: Record<string, string> }).headers.authorization, 'Bearer sk-forward');
  });

  it('transformation: the backend transformation sets a request header', async () => {
    const got = await viaProxy(port('transform'), `http://127.0.0.1:${echo.port}/tx`);
    assert.equal((JSON.parse(got.body) as { headers: Record<string, string> }).headers['x-btx'], 'on');
  });

  it('http.requestTimeout: a destination slower than the deadline gets 504', async () => {
    const got = await viaProxy(port('timeout'), `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow`);
    assert.equal(got.status, 504, got.body);
  });

  it('CONNECT: tunnel chains the raw tunnel through the upstream proxy; tls cannot apply to a tunnel and fails closed', async () => {
    const agent = new ProxyAgent({ uri: `http://127.0.0.1:${port('connect-tunnel')}`, proxyTunnel: true });
    try {
      const answer = await undiciRequest(`http://localhost:${echo.port}/via-connect`, { dispatcher: agent });
      assert.equal(answer.statusCode, 200);
      assert.equal(((await answer.body.json()) as { path: string }).path, '/via-connect');
    } finally {
      await agent.close();
    }
    assert.ok(proxy.targets.filter((t) => t === `127.0.0.1:${echo.port}`).length >= 1);
    assert.match(await rawConnect(port('connect-tls'), `localhost:${echo.port}`), /^HTTP\/1\.1 500/);
  });
});
