/**
 * The dynamic forward proxy (ProxyBackend `spec.dynamicForwardProxy`, issue 17 item 2) through a
 * listening gateway, driven like curl drives a proxy: absolute-form requests from node's http
 * client and undici's ProxyAgent. Covers the allow list (allowed and refused destinations), the
 * blocked address classes (loopback by IP and by a name that resolves to it, metadata), and the
 * status of a backend written without access control.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { createCertificate } from '../support/certs.ts';
import { after, before, describe, it } from 'node:test';
import { ProxyAgent, request as undiciRequest } from 'undici';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { conditionOf, startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, routeTrafficPolicy } from '../support/manifests.ts';
import { viaProxy } from './proxy-clients.ts';

function forwardBackend(name: string, accessControl: string | undefined): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  dynamicForwardProxy: {${accessControl === undefined ? '' : ` accessControl: ${accessControl} `}}
`;
}

/** A catch-all route on listener port `port` to ProxyBackend `backend`. */
function route(name: string, sectionName: string, backend: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw, sectionName: ${sectionName} }]
  rules:
    - backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${backend} }]
`;
}

describe('dynamic forward proxy', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('origin');
    gw = await startGateway(
      gatewayClass() +
        gateway('gw', [{ name: 'open', port: 80 }, { name: 'strict', port: 81 }, { name: 'listed', port: 82 }, { name: 'guarded', port: 83 }, { name: 'tls', port: 84 }, { name: 'inline', port: 85 }]) +
        // Loopback allowed on purpose: the test origin listens on 127.0.0.1. Link-local too, which never opens metadata.
        forwardBackend('open', "{ allowedHosts: ['127.0.0.1', localhost, '169.254.169.254'], allowAddressClasses: [loopback, linkLocal] }") +
        // The default: loopback stays blocked even for a listed name.
        forwardBackend('strict', "{ allowedHosts: ['*'] }") +
        forwardBackend('listed', "{ allowedHosts: ['*.allowed.example'], allowAddressClasses: [loopback] }") +
        forwardBackend('unguarded', undefined) +
        forwardBackend('guarded', "{ allowedHosts: ['127.0.0.1'], allowAddressClasses: [loopback] }") +
        forwardBackend('with-tls', "{ allowedHosts: ['127.0.0.1'], allowAddressClasses: [loopback] }") +
        forwardBackend('inline-policies', "{ allowedHosts: ['127.0.0.1'], allowAddressClasses: [loopback] }").replace('spec:\n', 'spec:\n  policies: { auth: { key: sk-inline } }\n') +
        route('inline', 'inline', 'inline-policies') +
        route('open', 'open', 'open') + route('strict', 'strict', 'strict') + route('listed', 'listed', 'listed') +
        route('guarded', 'guarded', 'guarded') + route('tls', 'tls', 'with-tls') +
        // Who may use the proxy: route authorization applies as on any backend.
        routeTrafficPolicy('who', 'guarded', `authorization: { action: Allow, policy: { matchExpressions: ['request.headers["x-user"] == "alice"'] } }`) +
        `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: backend-tls, namespace: default }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: with-tls }]
  backend: { tls: { insecureSkipVerify: All } }
`,
    );
  });
  after(async () => {
    await gw.close();
    await echo.close();
  });

  it('forwards an absolute-form GET to the Host it names, path and query kept', async () => {
    const got = await viaProxy(gw.portOf(80), `http://127.0.0.1:${echo.port}/hello?x=1`);
    assert.equal(got.status, 200, got.body);
    const seen = JSON.parse(got.body) as { path: string; host: string; server: string };
    assert.equal(seen.server, 'origin');
    assert.equal(seen.path, '/hello');
    assert.equal(seen.host, `127.0.0.1:${echo.port}`);
  });

  it('forwards a POST body through undici ProxyAgent (absolute-form, no tunnel)', async () => {
    const agent = new ProxyAgent({ uri: `http://127.0.0.1:${gw.portOf(80)}`, proxyTunnel: false });
    try {
      const answer = await undiciRequest(`http://localhost:${echo.port}/post`, { method: 'POST', body: 'payload', dispatcher: agent });
      const seen = (await answer.body.json()) as { path: string; method: string; bodyLength: number };
      assert.equal(answer.statusCode, 200);
      assert.deepEqual([seen.method, seen.path, seen.bodyLength], ['POST', '/post', 7]);
    } finally {
      await agent.close();
    }
  });

  it('refuses a destination outside the allow list with 403 and never reaches it', async () => {
    const before = echo.seen.length;
    const got = await viaProxy(gw.portOf(82), `http://127.0.0.1:${echo.port}/x`);
    assert.equal(got.status, 403);
    assert.match(got.body, /destination_not_allowed/);
    assert.equal(echo.seen.length, before);
  });

  it('refuses loopback by IP and by a name resolving to it, and the metadata address, when the class is not allowed', async () => {
    const before = echo.seen.length;
    for (const target of [`http://127.0.0.1:${echo.port}/`, `http://localhost:${echo.port}/`, 'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/']) {
      const got = await viaProxy(gw.portOf(81), target);
      assert.equal(got.status, 403, target);
      assert.match(got.body, /destination_blocked/, target);
    }
    assert.equal(echo.seen.length, before);
  });

  it('the metadata address stays blocked where link-local is allowed and the name is listed', async () => {
    const got = await viaProxy(gw.portOf(80), 'http://169.254.169.254/latest/meta-data/');
    assert.equal(got.status, 403);
    assert.match(got.body, /destination_blocked/);
  });

  it('a backend without access control is not accepted, and says why', () => {
    const accepted = conditionOf(gw.statusOf('ProxyBackend', 'unguarded').conditions, 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.match(accepted?.message ?? '', /accessControl\.allowedHosts is required/);
    assert.equal(conditionOf(gw.statusOf('ProxyBackend', 'open').conditions, 'Accepted')?.status, 'True');
  });

  it('route authorization decides who may use the proxy', async () => {
    const target = `http://127.0.0.1:${echo.port}/who`;
    const denied = await viaProxy(gw.portOf(83), target);
    assert.equal(denied.status, 403);
    const allowed = await viaProxy(gw.portOf(83), target, { headers: { 'x-user': 'alice' } });
    assert.equal(allowed.status, 200, allowed.body);
  });

  it('a backend tls policy originates TLS (a plain destination is never spoken to in the clear: 502)', async () => {
    const before = echo.seen.length;
    const got = await viaProxy(gw.portOf(84), `http://127.0.0.1:${echo.port}/tls-policy`);
    assert.equal(got.status, 502, got.body);
    assert.equal(echo.seen.length, before);
  });

  it('inline spec.policies are accepted and applied (the backend credential reaches the destination)', async () => {
    const inline = conditionOf(gw.statusOf('ProxyBackend', 'inline-policies').conditions, 'Accepted');
    assert.equal(inline?.status, 'True', inline?.message);
    const got = await viaProxy(gw.portOf(85), `http://127.0.0.1:${echo.port}/inline`);
    assert.equal((JSON.parse(got.body) as { headers: Record<string, string> }).headers.authorization, 'Bearer sk-inline');
  });

  it('an https:// target is reached over TLS to the checked address, with the asked-for name as SNI, and the certificate is verified', async () => {
    // A self-signed origin: the gateway trusts only the system CAs, so the handshake must fail after SNI was sent.
    const cert = await createCertificate(['localhost']);
    const seenNames: string[] = [];
    const context = createSecureContext({ cert: cert.certPem, key: cert.keyPem });
    const origin = https.createServer({
      cert: cert.certPem, key: cert.keyPem,
      SNICallback: (name, done) => {
        seenNames.push(name);
        done(null, context);
      },
    }, (_req, res) => res.end('reached'));
    origin.on('tlsClientError', () => undefined);
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    try {
      const got = await viaProxy(gw.portOf(80), `https://localhost:${(origin.address() as AddressInfo).port}/secure`);
      assert.equal(got.status, 502, got.body);
      assert.deepEqual(seenNames, ['localhost']);
    } finally {
      origin.close();
    }
  });
});
