/**
 * CONNECT over HTTP/2 (RFC 9113 §8.5: a stream with `:method CONNECT` and `:authority`, no
 * `:scheme`/`:path`) and CONNECT on HTTPS binds (TLS first, then CONNECT inside), in both frontend
 * modes (issue 17 item 4). Clients: node's http2 client opening a CONNECT stream and node's http
 * client speaking HTTP/1.1 through it; undici's ProxyAgent over a TLS proxy connection. The
 * HTTPS binds present a certificate the clients verify against its test CA.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ProxyAgent, request as undiciRequest } from 'undici';
import { createCertificate, type TestCertificate } from '../support/certs.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, routeTrafficPolicy, service, tlsSecret } from '../support/manifests.ts';

const connectMode = (name: string, port: number, mode: 'Route' | 'Tunnel') => `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw, port: ${port} }]
  frontend: { connect: { mode: ${mode} } }
`;

const route = (name: string, section: string, extra: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw, sectionName: ${section} }]
${extra}`;

const ROUTES = ['route-h2c', 'route-tls'].map((section) =>
  route(`internal-${section}`, section, `  hostnames: [echo.internal]\n  rules:\n    - backendRefs: [{ name: echo, port: 8080 }]\n`) +
  route(`guarded-${section}`, section, `  hostnames: [guarded.internal]\n  rules:\n    - backendRefs: [{ name: echo, port: 8080 }]\n`) +
  route(`egress-${section}`, section, `  hostnames: [localhost]\n  rules:\n    - backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: egress }]\n`)).join('') +
  route('inner', 'inner', `  rules:\n    - matches: [{ path: { type: PathPrefix, value: /open } }]\n      backendRefs: [{ name: echo, port: 8080 }]\n`) +
  route('inner-guarded', 'inner', `  rules:\n    - matches: [{ path: { type: PathPrefix, value: /guarded } }]\n      backendRefs: [{ name: echo, port: 8080 }]\n`) +
  route('plain', 'plain', `  rules:\n    - backendRefs: [{ name: echo, port: 8080 }]\n`) + `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: egress }
spec:
  dynamicForwardProxy: { accessControl: { allowedHosts: [localhost], allowAddressClasses: [loopback] } }
`;

/**
 * undici's ProxyAgent offers h2 to an HTTPS proxy by default but sends its CONNECT only over
 * HTTP/1.1 (it reconnects forever otherwise): pinned to http/1.1 here, as curl does with a proxy.
 */
let PROXY_TLS: { ca: string; servername: string; allowH2: false };

const ALICE_ONLY = `authorization: { action: Allow, policy: { matchExpressions: ['request.headers["x-user"] == "alice"'] } }`;

/** Opens a CONNECT stream; resolves with its response headers (the stream stays open on 200). */
async function connectStream(session: ClientHttp2Session, authority: string, headers: Record<string, string> = {}): Promise<{ stream: ClientHttp2Stream; status: number }> {
  const stream = session.request({ ':method': 'CONNECT', ':authority': authority, ...headers });
  const [answer] = (await once(stream, 'response')) as [IncomingHttpHeaders & { ':status': number }];
  return { stream, status: answer[':status'] };
}

/** An HTTP/1.1 request written through `stream` by node's http client; its status and body. */
async function httpThrough(stream: ClientHttp2Stream, host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const req = http.request({ host, path, headers: { ...headers, host, connection: 'close' }, createConnection: () => stream as never });
  req.end();
  const [res] = (await once(req, 'response')) as [http.IncomingMessage];
  let body = '';
  for await (const chunk of res) body += String(chunk);
  return { status: res.statusCode ?? 0, body };
}

describe('CONNECT over HTTP/2 and on HTTPS binds', () => {
  let echo: EchoServer;
  let gw: GatewayHarness;
  let cert: TestCertificate;
  let origin: https.Server;
  const sessions: ClientHttp2Session[] = [];
  const h2c = (port: number) => {
    const session = http2.connect(`http://127.0.0.1:${gw.portOf(port)}`);
    sessions.push(session);
    return session;
  };
  const h2 = (port: number) => {
    const session = http2.connect(`https://127.0.0.1:${gw.portOf(port)}`, { ca: cert.certPem, servername: 'proxy.test' });
    sessions.push(session);
    return session;
  };

  before(async () => {
    echo = await startEchoServer('echo');
    cert = await createCertificate(['proxy.test', 'localhost']);
    PROXY_TLS = { ca: cert.certPem, servername: 'proxy.test', allowH2: false };
    origin = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => res.end(`secure ${req.url ?? ''}`));
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    gw = await startGateway(
      gatewayClass() + tlsSecret('proxy-cert', cert) + service('echo', echo) +
        gateway('gw', [
          { name: 'route-h2c', port: 80 },
          { name: 'route-tls', port: 443, protocol: 'HTTPS', certificates: ['proxy-cert'] },
          { name: 'tunnel-h2c', port: 82 },
          { name: 'tunnel-tls', port: 444, protocol: 'HTTPS', certificates: ['proxy-cert'] },
          { name: 'inner', port: 8081 },
          { name: 'plain', port: 81 },
        ]) +
        connectMode('route-h2c', 80, 'Route') + connectMode('route-tls', 443, 'Route') + connectMode('tunnel-h2c', 82, 'Tunnel') + connectMode('tunnel-tls', 444, 'Tunnel') +
        ROUTES +
        routeTrafficPolicy('who-h2c', 'guarded-route-h2c', ALICE_ONLY) + routeTrafficPolicy('who-tls', 'guarded-route-tls', ALICE_ONLY) + routeTrafficPolicy('who-inner', 'inner-guarded', ALICE_ONLY),
    );
  });
  after(async () => {
    for (const s of sessions) s.destroy();
    await gw?.close();
    await echo?.close();
    origin?.close();
  });

  it('Route over h2c: a CONNECT stream to the routed Service carries an HTTP/1.1 exchange', async () => {
    const { stream, status } = await connectStream(h2c(80), 'echo.internal:80');
    assert.equal(status, 200);
    const answer = await httpThrough(stream, 'echo.internal', '/through?x=1');
    const seen = JSON.parse(answer.body) as { server: string; path: string; host: string };
    assert.deepEqual([answer.status, seen.server, seen.path, seen.host], [200, 'echo', '/through', 'echo.internal']);
  });

  it('Route over h2c: route authorization decides on the CONNECT stream; other streams of the connection go on', async () => {
    const session = h2c(80);
    assert.equal((await connectStream(session, 'guarded.internal:80')).status, 403);
    const { stream, status } = await connectStream(session, 'guarded.internal:80', { 'x-user': 'alice' });
    assert.equal(status, 200);
    assert.equal((await httpThrough(stream, 'guarded.internal', '/ok')).status, 200);
  });

  it('Route over h2c: no route 404, a target without a port 400, a bind without the mode 405', async () => {
    assert.equal((await connectStream(h2c(80), 'nowhere.internal:443')).status, 404);
    assert.equal((await connectStream(h2c(80), 'no-port.internal')).status, 400);
    assert.equal((await connectStream(h2c(81), 'echo.internal:80')).status, 405);
  });

  it('Route over h2 on an HTTPS bind: TLS to the gateway, then a CONNECT stream inside', async () => {
    const session = h2(443);
    assert.equal((await connectStream(session, 'guarded.internal:80')).status, 403);
    const { stream, status } = await connectStream(session, 'echo.internal:80');
    assert.equal(status, 200);
    const answer = await httpThrough(stream, 'echo.internal', '/over-h2-tls');
    assert.equal((JSON.parse(answer.body) as { path: string }).path, '/over-h2-tls');
  });

  it('Route on an HTTPS bind over HTTP/1.1: undici ProxyAgent reaches an HTTPS origin through the dynamic forward proxy (TLS inside TLS)', async () => {
    const agent = new ProxyAgent({ uri: `https://127.0.0.1:${gw.portOf(443)}`, proxyTunnel: true, proxyTls: PROXY_TLS, requestTls: { ca: cert.certPem } });
    try {
      const answer = await undiciRequest(`https://localhost:${(origin.address() as AddressInfo).port}/deep`, { dispatcher: agent });
      assert.equal(answer.statusCode, 200);
      assert.equal(await answer.body.text(), 'secure /deep');
      await assert.rejects(undiciRequest('http://guarded.internal/', { dispatcher: agent }), /403/);
    } finally {
      await agent.close();
    }
  });

  it('Tunnel over h2c: the CONNECT stream enters the named Gateway port, whose route authorization applies per request', async () => {
    const open = await connectStream(h2c(82), 'ignored.example:8081');
    assert.equal(open.status, 200);
    assert.equal((JSON.parse((await httpThrough(open.stream, 'inner.example', '/open/x')).body) as { path: string }).path, '/open/x');
    const denied = await connectStream(h2c(82), 'ignored.example:8081');
    assert.equal((await httpThrough(denied.stream, 'inner.example', '/guarded')).status, 403);
    const allowed = await connectStream(h2c(82), 'ignored.example:8081');
    assert.equal((await httpThrough(allowed.stream, 'inner.example', '/guarded', { 'x-user': 'alice' })).status, 200);
    assert.equal((await connectStream(h2c(82), 'ignored.example:9')).status, 404);
  });

  it('Tunnel over h2c into an HTTPS bind: the client\'s TLS runs inside the CONNECT stream and the inner bind terminates it', async () => {
    const { stream, status } = await connectStream(h2c(82), 'ignored.example:443');
    assert.equal(status, 200);
    const secure = tls.connect({ socket: stream as never, servername: 'proxy.test', ca: cert.certPem, ALPNProtocols: ['http/1.1'] });
    await once(secure, 'secureConnect');
    const req = http.request({ host: 'echo.internal', path: '/inside-tls', headers: { host: 'echo.internal', connection: 'close' }, createConnection: () => secure as never });
    req.end();
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    let body = '';
    for await (const chunk of res) body += String(chunk);
    assert.equal(res.statusCode, 200, body);
    assert.equal((JSON.parse(body) as { path: string }).path, '/inside-tls');
  });

  it('Tunnel on HTTPS binds: over h2 and over HTTP/1.1 (undici ProxyAgent) inside TLS', async () => {
    const { stream, status } = await connectStream(h2(444), 'ignored.example:8081');
    assert.equal(status, 200);
    assert.equal((await httpThrough(stream, 'inner.example', '/guarded', { 'x-user': 'alice' })).status, 200);
    const agent = new ProxyAgent({ uri: `https://127.0.0.1:${gw.portOf(444)}`, proxyTunnel: true, proxyTls: PROXY_TLS });
    try {
      const answer = await undiciRequest(`http://inner.example:${8081}/open/h1`, { dispatcher: agent });
      assert.equal(answer.statusCode, 200);
      assert.equal(((await answer.body.json()) as { path: string }).path, '/open/h1');
    } finally {
      await agent.close();
    }
  });
});
