/**
 * WebSocket upgrades walk the same lifecycle as ordinary requests (docs/architecture.md): the
 * listener's PreRouting policies (a header they set decides the route; a refusal stops the
 * upgrade), PostRouting authentication and rate limits (refused with the status, headers and body
 * an ordinary request gets), response effects on the 101, and the backend-policy layer on the
 * upstream connection (TLS origination with the CA from a ConfigMap, credentials from a Secret, a
 * missing Secret failing closed). The LLM Realtime handler gets the same phases first.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import { jwks, testSigner, type TestSigner } from '../../src/proxy/policies/traffic/jwt-authentication/test-keys.ts';
import { startMockRealtime, type MockRealtime } from '../llm/mock-realtime.ts';
import { createCertificate } from '../support/certs.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';
import { startWebSocketEcho, type WebSocketEchoServer, type WebSocketHello } from '../support/ws-echo.ts';

const UPSTREAM_CERT = await createCertificate(['upstream.test']);
const ISSUER = 'https://idp.example.com';
const ORIGIN = 'https://app.example.com';
const BACKEND_SIGNER = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const PRE = 80;
const POST = 81;

type Upgrade =
  | { readonly kind: 'open'; readonly headers: IncomingHttpHeaders; readonly hello: WebSocketHello | string }
  | { readonly kind: 'refused'; readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: string };

/** Opens a WebSocket: the 101's headers and the upstream's first message, or the refusal as it came. */
function upgrade(gw: GatewayHarness, port: number, path: string, headers: Record<string, string> = {}, protocols: string[] = []): Promise<Upgrade> {
  const ws = new WebSocket(`ws://127.0.0.1:${gw.portOf(port)}${path}`, protocols, { headers });
  return new Promise<Upgrade>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer within 5 s')), 5000);
    let upgraded: IncomingHttpHeaders = {};
    ws.on('upgrade', (res) => (upgraded = res.headers));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ kind: 'refused', status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.on('message', (data) => {
      clearTimeout(timer);
      const text = String(data);
      resolve({ kind: 'open', headers: upgraded, hello: text.startsWith('{"server"') ? JSON.parse(text) as WebSocketHello : text });
    });
  }).finally(() => ws.terminate());
}

function opened(u: Upgrade): { headers: IncomingHttpHeaders; hello: WebSocketHello } {
  assert.equal(u.kind, 'open', `the upgrade was refused: ${u.kind === 'refused' ? `${u.status} ${u.body}` : ''}`);
  const o = u as Extract<Upgrade, { kind: 'open' }>;
  assert.equal(typeof o.hello, 'object', `not a ws-echo greeting: ${String(o.hello)}`);
  return { headers: o.headers, hello: o.hello as WebSocketHello };
}

function refused(u: Upgrade): Extract<Upgrade, { kind: 'refused' }> {
  assert.equal(u.kind, 'refused', 'the upgrade must be refused');
  return u as Extract<Upgrade, { kind: 'refused' }>;
}

/**
 * A raw upstream for the edges of the relay: `/silent` accepts and never answers, `/refuse` answers
 * 403 and keeps the connection open, `/huge` answers with a head over the 16 KiB bound. It records
 * every request line it reads.
 */
function startRawUpstream(): Promise<Server & { requestLines: string[] }> {
  const requestLines: string[] = [];
  const server = Object.assign(createServer((socket) => {
    let buffered = '';
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const line = buffered.slice(0, buffered.indexOf('\r\n'));
        buffered = buffered.slice(end + 4);
        requestLines.push(line);
        if (line.includes(' /refuse')) socket.write('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: 6\r\n\r\ndenied');
        if (line.includes(' /huge')) socket.write(`HTTP/1.1 101 Switching Protocols\r\nx-big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
      }
    });
  }), { requestLines });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Writes `text` on a raw connection to the gateway and returns all it answers until it closes. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text, 'latin1'));
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway did not close within 5 s; got: ${answer}`));
    }, 5000);
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

const doc = (o: unknown) => `---\n${stringify(o)}`;
const route = (name: string, path: string, backendRef: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name, matches: [{ path: { type: 'PathPrefix', value: path }, ...extra }], backendRefs: [backendRef],
});
const trafficPolicy = (name: string, rule: string, traffic: Record<string, unknown>) => doc({
  apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name, namespace: 'default' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: rule }], traffic },
});
const backendPolicy = (name: string, rule: string, backend: Record<string, unknown>) => doc({
  apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name, namespace: 'default' },
  spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: rule }], backend },
});

describe('WebSocket upgrades walk the request lifecycle', () => {
  const echoes: Record<string, WebSocketEchoServer> = {};
  let mock: MockRealtime;
  let raw: Server & { requestLines: string[] };
  let signer: TestSigner;
  let gw: GatewayHarness;

  before(async () => {
    signer = await testSigner('ES256', 'k1');
    for (const name of ['gold', 'standard', 'plain', 'credentialed', 'guarded']) echoes[name] = await startWebSocketEcho(name);
    echoes.secure = await startWebSocketEcho('secure', UPSTREAM_CERT);
    mock = await startMockRealtime((h) => h.authorization === 'Bearer sk-provider');
    raw = await startRawUpstream();
    const closed = await startRawUpstream();
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const svc = (name: string) => ({ name, port: 8080 });
    const rules = [
      route('gold', '/tier', svc('gold'), { headers: [{ name: 'x-tier', value: 'gold' }] }),
      route('standard', '/tier', svc('standard')),
      route('apikey', '/apikey', svc('plain')),
      route('jwt', '/jwt', svc('plain')),
      route('limited', '/limited', svc('plain')),
      route('effects', '/effects', svc('plain')),
      route('host-auto', '/host-auto', svc('plain')),
      route('host-none', '/host-none', svc('plain')),
      route('tls', '/tls', svc('secure')),
      route('secret', '/secret', svc('credentialed')),
      route('missing', '/missing', svc('guarded')),
      route('signed', '/signed', svc('credentialed')),
      route('realtime', '/rt', { group: 'switchboard.dev', kind: 'ProxyBackend', name: 'rt-ai' }, { headers: [{ name: 'x-tier', value: 'gold' }] }),
      route('realtime-other', '/rt', svc('standard')),
      { ...route('silent', '/silent', svc('raw')), timeouts: { request: '300ms' } },
      route('refuse', '/refuse', svc('raw')),
      route('huge', '/huge', svc('raw')),
      route('down', '/down', svc('down')),
    ];
    gw = await startGateway(gatewayClass()
      + Object.entries(echoes).map(([name, server]) => service(name, server)).join('')
      + service('raw', { host: '127.0.0.1', port: (raw.address() as AddressInfo).port })
      + service('down', { host: '127.0.0.1', port: closedPort })
      + gateway('gw', [{ name: 'pre', port: PRE }, { name: 'post', port: POST }])
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api-keys', namespace: 'default' }, stringData: { alice: 'sk-alice', bob: 'sk-bob' } })
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ws-key', namespace: 'default' }, stringData: { Authorization: 'Bearer from-secret', extra: 'extra-from-secret' } })
      + doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'upstream-ca', namespace: 'default' }, data: { 'ca.crt': UPSTREAM_CERT.certPem } })
      + doc({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules } })
      // PreRouting on listener `pre`: every request authenticates, alice's are marked gold before routing.
      + doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'pre', namespace: 'default' },
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', sectionName: 'pre' }],
          traffic: { phase: 'PreRouting', apiKeyAuthentication: { secretRef: { name: 'api-keys' } }, transformation: { request: { set: [{ name: 'x-tier', value: 'apiKey.name == "alice" ? "gold" : "standard"' }] } } },
        },
      })
      + trafficPolicy('apikey', 'apikey', { apiKeyAuthentication: { secretRef: { name: 'api-keys' } } })
      + trafficPolicy('jwt', 'jwt', { jwtAuthentication: { providers: [{ issuer: ISSUER, audiences: ['api'], jwks: { inline: jwks(signer) } }] } })
      + trafficPolicy('limited', 'limited', { rateLimit: { local: [{ requests: 1, unit: 'Hours' }] } })
      + trafficPolicy('host-auto', 'host-auto', { hostRewrite: { mode: 'Auto' } })
      + trafficPolicy('host-none', 'host-none', { hostRewrite: { mode: 'None' } })
      + trafficPolicy('effects', 'effects', { cors: { allowOrigins: [ORIGIN], allowMethods: ['GET'] }, headerModifiers: { response: { set: [{ name: 'x-effect', value: 'applied' }] } } })
      + trafficPolicy('realtime', 'realtime', { headerModifiers: { response: { set: [{ name: 'x-effect', value: 'realtime' }] } } })
      + backendPolicy('tls', 'tls', { tls: { caCertificateRefs: [{ name: 'upstream-ca' }], sni: 'upstream.test' } })
      + backendPolicy('secret', 'secret', { auth: { secretRef: { name: 'ws-key' }, credentials: [{ location: { header: { name: 'x-extra' } }, secretRef: { name: 'ws-key', key: 'extra' } }] } })
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'signer', namespace: 'default' }, stringData: { signingKey: BACKEND_SIGNER.privateKey.export({ type: 'sec1', format: 'pem' }) } })
      + backendPolicy('signed', 'signed', { auth: { jwtSign: { signingKeyRef: { name: 'signer' }, alg: 'ES256', claims: { iss: 'switchboard', aud: 'ws' }, ttl: '60s' } } })
      + backendPolicy('missing', 'missing', { auth: { secretRef: { name: 'no-such-secret' } } })
      + doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'rt-ai', namespace: 'default' },
        spec: { ai: { provider: { providerA: {}, host: mock.host, port: mock.port } }, policies: { auth: { key: 'sk-provider' }, ai: { routes: { '/v1/realtime': 'Realtime' } } } },
      }));
  });
  after(async () => {
    await gw?.close();
    for (const server of Object.values(echoes)) await server.close();
    await mock?.stop();
    await new Promise((resolve) => raw?.close(resolve));
  });

  const alice = { authorization: 'Bearer sk-alice' };
  const bob = { authorization: 'Bearer sk-bob' };

  describe('PreRouting (listener policy)', () => {
    const rows = [
      { name: "a header it sets decides the route (alice's key → gold)", headers: alice, server: 'gold', tier: 'gold' },
      { name: "a header it sets decides the route (bob's key → standard)", headers: bob, server: 'standard', tier: 'standard' },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const { hello } = opened(await upgrade(gw, PRE, '/tier/room', row.headers));
        assert.equal(hello.server, row.server);
        assert.equal(hello.headers['x-tier'], row.tier);
      });
    }
  });

  /** Each row's upgrade is refused exactly as an ordinary GET with the same headers is answered. */
  const refusals: { name: string; port: number; path: string; headers: Record<string, string>; status: number; compare: string[]; before?: number }[] = [
    { name: 'PreRouting API key missing → 401', port: PRE, path: '/tier/room', headers: {}, status: 401, compare: ['www-authenticate', 'content-type'] },
    { name: 'PreRouting API key unknown → 401', port: PRE, path: '/tier/room', headers: { authorization: 'Bearer sk-nobody' }, status: 401, compare: ['www-authenticate', 'content-type'] },
    { name: 'PostRouting API key missing → 401', port: POST, path: '/apikey', headers: {}, status: 401, compare: ['www-authenticate', 'content-type'] },
    { name: 'PostRouting JWT missing → 401 with its Bearer challenge', port: POST, path: '/jwt', headers: {}, status: 401, compare: ['www-authenticate', 'content-type'] },
    { name: 'PostRouting JWT that does not parse → 401 with invalid_token in the challenge', port: POST, path: '/jwt', headers: { authorization: 'Bearer not-a-jwt' }, status: 401, compare: ['www-authenticate', 'content-type'] },
    { name: 'PostRouting local rate limit → 429 with Retry-After', port: POST, path: '/limited', headers: {}, status: 429, compare: ['content-type'], before: 1 },
  ];
  describe('refusals: the same answer as an ordinary request', () => {
    for (const row of refusals) {
      it(row.name, async () => {
        for (let i = 0; i < (row.before ?? 0); i++) opened(await upgrade(gw, row.port, row.path, row.headers));
        const answer = refused(await upgrade(gw, row.port, row.path, row.headers));
        const ordinary = await gw.request(row.port, { path: row.path, headers: row.headers });
        assert.equal(answer.status, row.status, answer.body);
        assert.equal(ordinary.status, row.status);
        assert.equal(answer.body, ordinary.text);
        for (const name of row.compare) assert.equal(answer.headers[name], ordinary.headers[name], name);
        if (row.status === 401) assert.match(String(answer.headers['www-authenticate']), /^Bearer/);
        if (row.status === 429) assert.ok(Number(answer.headers['retry-after']) >= 1, `retry-after: ${String(answer.headers['retry-after'])}`);
        assert.equal(answer.headers.connection, 'close');
      });
    }
  });

  it('PostRouting auth lets a valid API key and a valid JWT upgrade', async () => {
    assert.equal(opened(await upgrade(gw, POST, '/apikey', alice)).hello.server, 'plain');
    const token = await signer.sign({ iss: ISSUER, aud: 'api', sub: 'ann' }, { expiresIn: '5m' });
    assert.equal(opened(await upgrade(gw, POST, '/jwt', { authorization: `Bearer ${token}` })).hello.server, 'plain');
  });

  it('response effects (CORS, headerModifiers.response) apply to the 101', async () => {
    const { headers } = opened(await upgrade(gw, POST, '/effects', { origin: ORIGIN }));
    assert.equal(headers['x-effect'], 'applied');
    assert.equal(headers['access-control-allow-origin'], ORIGIN);
  });

  it('traffic hostRewrite: Auto sends the destination as Host, None the client\'s (as on ordinary requests)', async () => {
    const auto = opened(await upgrade(gw, POST, '/host-auto', { host: 'client.example' })).hello;
    assert.equal(auto.headers.host, `127.0.0.1:${echoes.plain.port}`);
    const none = opened(await upgrade(gw, POST, '/host-none', { host: 'client.example' })).hello;
    assert.equal(none.headers.host, 'client.example');
  });

  it('backend TLS: the upstream is reached over TLS with the configured SNI, CA and ALPN http/1.1', async () => {
    const { hello } = opened(await upgrade(gw, POST, '/tls/chat?x=1'));
    assert.equal(hello.server, 'secure');
    assert.equal(hello.path, '/tls/chat?x=1');
    assert.deepEqual(hello.tls, { servername: 'upstream.test', alpn: 'http/1.1' });
  });

  it("backend auth: the Secret's credential (and credentials[]) reach the upstream's upgrade request, replacing the client's", async () => {
    const { hello } = opened(await upgrade(gw, POST, '/secret', { authorization: 'Bearer client-token' }));
    assert.equal(hello.headers.authorization, 'Bearer from-secret');
    assert.equal(hello.headers['x-extra'], 'extra-from-secret');
  });

  it('backend auth jwtSign: a freshly signed token reaches the upstream\'s upgrade request', async () => {
    const { hello } = opened(await upgrade(gw, POST, '/signed'));
    const header = String(hello.headers.authorization);
    assert.match(header, /^Bearer /);
    await jwtVerify(header.slice('Bearer '.length), BACKEND_SIGNER.publicKey, { issuer: 'switchboard', audience: 'ws' });
  });

  it('backend auth naming a missing Secret: 500 policy_invalid and the upstream sees nothing', async () => {
    const answer = refused(await upgrade(gw, POST, '/missing'));
    assert.equal(answer.status, 500);
    assert.match(answer.body, /policy_invalid/);
    assert.equal(echoes.guarded.upgrades, 0);
  });

  it('Realtime (the LLM handler): routed by a PreRouting header, upgraded with the backend key and the response effects on its 101', async () => {
    const before = mock.handshakes.length;
    const u = await upgrade(gw, PRE, '/rt/v1/realtime?model=gpt-realtime', alice, ['realtime']);
    assert.equal(u.kind, 'open', u.kind === 'refused' ? `${u.status} ${u.body}` : '');
    const o = u as Extract<Upgrade, { kind: 'open' }>;
    assert.match(String(o.hello), /session\.created/);
    assert.equal(o.headers['x-effect'], 'realtime');
    assert.equal(mock.handshakes.length, before + 1);
    assert.equal(mock.handshakes.at(-1)!.headers.authorization, 'Bearer sk-provider', "the backend key, not the client's");
    // Without PreRouting's gold mark the same path routes to the plain echo, not the Realtime handler.
    assert.equal(opened(await upgrade(gw, PRE, '/rt/v1/realtime?model=gpt-realtime', bob)).hello.server, 'standard');
  });

  it('Realtime refusals get the response effects too (PreRouting ran, the provider refuses)', async () => {
    const u = refused(await upgrade(gw, PRE, '/rt/v1/chat/completions', alice));
    assert.equal(u.status, 400);
    assert.equal(u.headers['x-effect'], 'realtime');
  });

  describe('the upstream leg', () => {
    const rows = [
      { name: 'an unreachable upstream → 502 upstream_connect_failed', path: '/down', status: 502, code: 'upstream_connect_failed' },
      { name: 'an upstream that never answers → 504 at the route timeout (300 ms)', path: '/silent', status: 504, code: 'request_timeout' },
      { name: 'an answer head over 16 KiB → 502 upstream_reset', path: '/huge', status: 502, code: 'upstream_reset' },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const answer = refused(await upgrade(gw, POST, row.path));
        assert.equal(answer.status, row.status, answer.body);
        assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, row.code);
      });
    }

    it("an upstream's refusal reaches the client with connection: close, and bytes sent after the upgrade request never reach the upstream", async () => {
      const before = raw.requestLines.length;
      const upgradeRequest = 'GET /refuse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n';
      const smuggled = 'GET /refuse/smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
      const answer = await rawExchange(gw.portOf(POST), upgradeRequest + smuggled);
      assert.match(answer, /^HTTP\/1\.1 403 Forbidden\r\n/);
      assert.match(answer, /\r\nconnection: close\r\n/);
      assert.ok(answer.endsWith('\r\n\r\ndenied'), answer);
      assert.deepEqual(raw.requestLines.slice(before), ['GET /refuse HTTP/1.1']);
    });
  });
});
