/** Traffic policies through YAML against real upstreams: cors, csrf, transformation, delay, retry, hostRewrite. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHttpServer, type RunningServer } from '../ext/servers.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';

const route = (name: string, prefix: string, backend = 'echo') => prefixRoute(name, prefix, backend);
const policy = routeTrafficPolicy;

describe('traffic policies end to end', () => {
  let echo: EchoServer;
  let flaky: RunningServer;
  let gw: GatewayHarness;
  /** Requests the flaky upstream saw, per path: it answers 503 to the first of each path. */
  const flakySeen = new Map<string, number>();

  before(async () => {
    echo = await startEchoServer('echo');
    flaky = await startHttpServer((req, _body, res) => {
      const n = (flakySeen.get(req.url ?? '') ?? 0) + 1;
      flakySeen.set(req.url ?? '', n);
      res.writeHead(n === 1 ? 503 : 200, { 'content-type': 'text/plain' }).end(`attempt ${n}`);
    });
    gw = await startGateway(
      gatewayClass() + service('echo', echo) + service('flaky', { host: '127.0.0.1', port: flaky.port }) + gateway('gw', [{ name: 'http', port: 80 }]) +
      route('cors', '/cors') + policy('cors', 'cors', `cors:
  allowOrigins: ["https://*.example.com"]
  allowMethods: [GET, POST]
  allowHeaders: [x-token]
  exposeHeaders: [x-echo-server]
  maxAge: 60`) +
      route('csrf', '/csrf') + policy('csrf', 'csrf', 'csrf: { additionalOrigins: ["https://trusted.example.com"] }') +
      route('transform', '/transform') + policy('transform', 'transform', `transformation:
  request:
    set: [{ name: x-route-path, value: request.path }]
    remove: [x-secret]
    body: '"wrapped:" + string(request.body)'
  response:
    add: [{ name: x-status, value: string(response.code) }]
    body: '"{\\"upstream\\":" + string(response.body) + "}"'`) +
      route('delay', '/delay') + policy('delay', 'delay', 'delay: { duration: \'request.headers["x-delay-ms"] == "" ? 0 : int(request.headers["x-delay-ms"])\' }\ntimeouts: { request: 200ms }') +
      route('retry', '/retry', 'flaky') + policy('retry', 'retry', 'retry: { codes: [503], attempts: 2, backoff: 10ms }') +
      route('no-retry', '/no-retry', 'flaky') +
      route('host-auto', '/host-auto') + policy('host-auto', 'host-auto', 'hostRewrite: { mode: Auto }'),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
    await flaky?.close();
  });

  it('cors: answers the preflight itself and decorates actual responses', async () => {
    const preflight = await gw.request(80, { path: '/cors', method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 200);
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(preflight.headers['access-control-max-age'], '60');
    const seenBefore = echo.seen.length;
    const actual = await gw.request(80, { path: '/cors', headers: { origin: 'https://app.example.com' } });
    assert.equal(actual.status, 200);
    assert.equal(actual.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(actual.headers['access-control-expose-headers'], 'x-echo-server');
    assert.equal(echo.seen.length, seenBefore + 1, 'only the actual request reached the upstream');
    const foreign = await gw.request(80, { path: '/cors', headers: { origin: 'https://evil.test' } });
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
  });

  it('csrf: rejects cross-site unsafe requests with 403 and lets the rest through', async () => {
    const rejected = await gw.request(80, { path: '/csrf', method: 'POST', body: 'x', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.test' } });
    assert.equal(rejected.status, 403);
    assert.equal(JSON.parse(rejected.text).error.code, 'csrf_rejected');
    const trusted = await gw.request(80, { path: '/csrf', method: 'POST', body: 'x', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://trusted.example.com' } });
    assert.equal(trusted.status, 200);
    const sameHost = await gw.request(80, { path: '/csrf', method: 'POST', body: 'x', host: 'api.test', headers: { origin: 'http://api.test' } });
    assert.equal(sameHost.status, 200);
  });

  it('transformation: request headers and body in, response header and body out', async () => {
    const res = await gw.request(80, { path: '/transform', method: 'POST', body: 'hello', headers: { 'x-secret': 's' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-status'], '200');
    const wrapped = JSON.parse(res.text) as { upstream: { headers: Record<string, string>; bodyLength: number } };
    assert.equal(wrapped.upstream.headers['x-route-path'], '/transform');
    assert.equal(wrapped.upstream.headers['x-secret'], undefined);
    assert.equal(wrapped.upstream.bodyLength, 'wrapped:hello'.length);
  });

  it('delay: waits, and the time counts against the request timeout', async () => {
    assert.equal((await gw.request(80, { path: '/delay', headers: { 'x-delay-ms': '0' } })).status, 200);
    const seenBefore = echo.seen.length;
    const late = await gw.request(80, { path: '/delay', headers: { 'x-delay-ms': '400' } });
    assert.equal(late.status, 504);
    assert.equal(echo.seen.length, seenBefore, 'the delay used up the whole timeout; nothing was forwarded');
  });

  it('retry: a listed status is retried and the retry answers', async () => {
    const res = await gw.request(80, { path: '/retry/a' });
    assert.equal(res.status, 200);
    assert.equal(res.text, 'attempt 2');
    const noPolicy = await gw.request(80, { path: '/no-retry/a' });
    assert.equal(noPolicy.status, 503, 'without the policy the first answer stands');
  });

  it('retry: a streamed request body is never replayed', async () => {
    const res = await gw.request(80, { path: '/retry/body', method: 'POST', body: 'payload' });
    assert.equal(res.status, 503);
    assert.equal(flakySeen.get('/retry/body'), 1);
  });

  it('hostRewrite Auto sends the destination as Host', async () => {
    const res = await gw.request(80, { path: '/host-auto', host: 'client.test' });
    assert.equal(res.echo().host, `127.0.0.1:${echo.port}`);
    const plain = await gw.request(80, { path: '/cors', host: 'client.test' });
    assert.equal(plain.echo().host, 'client.test');
  });
});
