/** extAuth (HTTP service), local rate limits and policies on WebSocket upgrades, through YAML against real servers. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { closedPort, startHttpServer, type RunningServer } from '../ext/servers.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';
import { startWebSocketEcho, type WebSocketEchoServer, type WebSocketHello } from '../support/ws-echo.ts';

const route = (name: string, prefix: string, backend = 'echo') => prefixRoute(name, prefix, backend);
const policy = routeTrafficPolicy;

/** Opens a WebSocket and resolves with the upstream's greeting, or rejects with the refusal status. */
function openSocket(url: string, headers: Record<string, string>): Promise<WebSocketHello> {
  const socket = new WebSocket(url, { headers });
  return new Promise<WebSocketHello>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no greeting within 5 s')), 5000);
    socket.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`refused ${res.statusCode}`));
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('message', (data) => {
      clearTimeout(timer);
      resolve(JSON.parse(String(data)) as WebSocketHello);
    });
  }).finally(() => socket.terminate());
}

describe('extAuth, rate limits and upgrades end to end', () => {
  let echo: EchoServer;
  let ws: WebSocketEchoServer;
  let authz: RunningServer;
  let gw: GatewayHarness;
  const authzBodies: string[] = [];

  before(async () => {
    echo = await startEchoServer('echo');
    ws = await startWebSocketEcho('ws');
    authz = await startHttpServer((req, body, res) => {
      authzBodies.push(body.toString());
      if (req.headers.authorization === 'Bearer good') res.writeHead(200, { 'x-user': 'ann' }).end();
      else res.writeHead(401, { 'www-authenticate': 'Bearer', 'x-internal': 'hidden' }).end('who are you');
    });
    const dead = await closedPort();
    gw = await startGateway(
      gatewayClass() + service('echo', echo) + service('ws', ws) + gateway('gw', [{ name: 'http', port: 80 }]) +
      route('authz', '/authz') + policy('authz', 'authz', `extAuth:
  url: ${authz.url}
  http: { allowedResponseHeaders: [x-user] }`) +
      route('authz-body', '/body') + policy('authz-body', 'authz-body', `extAuth:
  url: ${authz.url}
  http: {}
  forwardBody: { maxSize: 16 }`) +
      route('closed', '/closed') + policy('closed', 'closed', `extAuth: { url: "http://127.0.0.1:${dead}" }`) +
      route('open', '/open') + policy('open', 'open', `extAuth: { url: "http://127.0.0.1:${dead}", failureMode: FailOpen }`) +
      route('conditional', '/conditional') + policy('conditional', 'conditional', `extAuth:
  conditional:
    - condition: request.path.startsWith("/conditional/public")
      policy: { url: "http://127.0.0.1:${dead}", failureMode: FailOpen }
    - policy: { url: "${authz.url}", http: {} }`) +
      route('limited', '/limited') + policy('limited', 'limited', 'rateLimit: { local: [{ requests: 2, unit: Hours }] }') +
      route('socket', '/socket', 'ws') + policy('socket', 'socket', `extAuth: { url: "${authz.url}", http: {} }`),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
    await ws?.close();
    await authz?.close();
  });

  it('extAuth HTTP: an allow forwards with the allowed service headers', async () => {
    const res = await gw.request(80, { path: '/authz', headers: { authorization: 'Bearer good' } });
    assert.equal(res.status, 200);
    assert.equal(res.echo().headers['x-user'], 'ann');
  });

  it('extAuth HTTP: a denial answers with the service status, body and denial headers only', async () => {
    const seen = echo.seen.length;
    const res = await gw.request(80, { path: '/authz', headers: { authorization: 'Bearer bad' } });
    assert.equal(res.status, 401);
    assert.equal(res.text, 'who are you');
    assert.equal(res.headers['www-authenticate'], 'Bearer');
    assert.equal(res.headers['x-internal'], undefined);
    assert.equal(echo.seen.length, seen, 'nothing reached the upstream');
  });

  it('extAuth forwardBody: sends the body, rejects bodies over maxSize', async () => {
    const ok = await gw.request(80, { path: '/body', method: 'POST', body: 'small', headers: { authorization: 'Bearer good' } });
    assert.equal(ok.status, 200);
    assert.equal(authzBodies.at(-1), 'small');
    assert.equal(ok.echo().bodyLength, 5, 'the buffered body still goes upstream');
    const big = await gw.request(80, { path: '/body', method: 'POST', body: 'x'.repeat(64), headers: { authorization: 'Bearer good' } });
    assert.equal(big.status, 413);
  });

  it('extAuth unavailable: FailClosed denies with 403, FailOpen lets the request through', async () => {
    assert.equal((await gw.request(80, { path: '/closed' })).status, 403);
    assert.equal((await gw.request(80, { path: '/open' })).status, 200);
  });

  it('extAuth conditional: the first matching entry decides', async () => {
    assert.equal((await gw.request(80, { path: '/conditional/public' })).status, 200);
    assert.equal((await gw.request(80, { path: '/conditional/private' })).status, 401);
    assert.equal((await gw.request(80, { path: '/conditional/private', headers: { authorization: 'Bearer good' } })).status, 200);
  });

  it('local rate limit: 429 with retry-after once the bucket is empty', async () => {
    assert.equal((await gw.request(80, { path: '/limited' })).status, 200);
    assert.equal((await gw.request(80, { path: '/limited' })).status, 200);
    const limited = await gw.request(80, { path: '/limited' });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(JSON.parse(limited.text).error.code, 'rate_limited');
  });

  it('WebSocket upgrades pass through the policy chain: no credential, no socket', async () => {
    await assert.rejects(openSocket(gw.url(80, '/socket').replace('http', 'ws'), {}), /refused 401/);
    const hello = await openSocket(gw.url(80, '/socket').replace('http', 'ws'), { authorization: 'Bearer good' });
    assert.equal(hello.server, 'ws');
    assert.equal(hello.path, '/socket');
  });
});
