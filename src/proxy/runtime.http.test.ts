import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { silentLogger } from '../common/logger.ts';
import type { Filter, WeightedBackend } from '../ir/types.ts';
import { ProxyRuntime } from './runtime.ts';
import { http1, type TestResponse } from './testing/client.ts';
import { backend, bind, config, listener, route, rule } from './testing/config.ts';
import { startEchoServer, type EchoRecord, type EchoServer } from './testing/echo-server.ts';

const to = (backendKey: string | null, weight = 1, filters: Filter[] = []): WeightedBackend => ({ backendKey, weight, filters });
const prefix = (value: string) => [{ path: { type: 'PathPrefix' as const, value } }];
const echoed = (r: TestResponse) => JSON.parse(r.body) as EchoRecord;

describe('ProxyRuntime over HTTP/1.1', () => {
  let a: EchoServer;
  let b: EchoServer;
  let runtime: ProxyRuntime;
  let port: number;
  const registry = new Registry();

  before(async () => {
    a = await startEchoServer({ name: 'a' });
    b = await startEchoServer({ name: 'b' });
    const routes = [
      route('default/basic', [rule('default/basic/rule/0', { matches: prefix('/basic'), backends: [to('svc-a')] })]),
      route('default/headers', [rule('default/headers/rule/0', {
        matches: prefix('/headers'),
        filters: [
          { type: 'RequestHeaderModifier', set: [{ name: 'X-Set', value: 'set' }], add: [{ name: 'X-Add', value: 'added' }], remove: ['x-remove'] },
          { type: 'ResponseHeaderModifier', set: [{ name: 'X-Resp', value: 'r' }], add: [], remove: ['x-upstream'] },
        ],
        backends: [to('svc-a', 1, [{ type: 'RequestHeaderModifier', set: [{ name: 'x-set', value: 'backend-wins' }], add: [], remove: [] }])],
      })]),
      route('default/redirect', [rule('default/redirect/rule/0', {
        matches: prefix('/old'),
        filters: [{ type: 'RequestRedirect', scheme: 'https', path: { type: 'ReplacePrefixMatch', value: '/new' }, statusCode: 301 }],
      })]),
      route('default/rewrite', [rule('default/rewrite/rule/0', {
        matches: prefix('/api'),
        filters: [{ type: 'URLRewrite', hostname: 'internal.example', path: { type: 'ReplacePrefixMatch', value: '/' } }],
        backends: [to('svc-a')],
      })]),
      route('default/invalid', [rule('default/invalid/rule/0', { matches: prefix('/invalid'), backends: [to(null)] })]),
      route('default/nobackends', [rule('default/nobackends/rule/0', { matches: prefix('/nobackends') })]),
      route('default/empty', [rule('default/empty/rule/0', { matches: prefix('/empty'), backends: [to('svc-empty')] })]),
      route('default/dead', [rule('default/dead/rule/0', { matches: prefix('/dead'), backends: [to('svc-dead')] })]),
      route('default/rr', [rule('default/rr/rule/0', { matches: prefix('/rr'), backends: [to('svc-rr')] })]),
      route('default/weighted', [rule('default/weighted/rule/0', { matches: prefix('/weighted'), backends: [to('svc-a', 1), to('svc-b', 0)] })]),
      route('default/rewritehost', [rule('default/rewritehost/rule/0', { matches: prefix('/rewritehost'), backends: [to('svc-rewrite')] })]),
      route('default/hosted', [rule('default/hosted/rule/0', { backends: [to('svc-b')] })]),
      route('default/other', [rule('default/other/rule/0', { backends: [to('svc-b')] })]),
    ];
    const catchAllRoutes = routes.map((r) => r.key).filter((k) => k !== 'default/hosted' && k !== 'default/other');
    const main = listener('http', catchAllRoutes);
    const withHosted = { ...main, routes: [...main.routes, { routeKey: 'default/hosted', hostnames: ['foo.example.com'] }] };
    const other = listener('other', ['default/other'], { hostname: 'other.example.com' });
    runtime = new ProxyRuntime({ logger: silentLogger, registry, bindAddress: '127.0.0.1', listenPort: () => 0 });
    const result = await runtime.apply(config({
      binds: [bind(80, [other, withHosted])],
      routes,
      backends: [
        backend('svc-a', [a.port]),
        backend('svc-b', [b.port]),
        backend('svc-rr', [a.port, b.port]),
        backend('svc-empty', []),
        backend('svc-dead', [1]),
        backend('svc-rewrite', [a.port], { rewriteHost: true }),
      ],
    }));
    assert.deepEqual(result.errors, []);
    port = runtime.portOf(80) as number;
  });

  after(async () => {
    await runtime.close({ graceMs: 1000 });
    await Promise.all([a.close(), b.close()]);
  });

  it('is ready once the config is applied and serving', () => {
    assert.equal(runtime.ready(), true);
    assert.equal(runtime.current()?.version, 'v1');
  });

  it('forwards method, path, query, body and the client Host, adding X-Forwarded-*', async () => {
    const r = await http1(port, { method: 'POST', path: '/basic/x?q=1', headers: { host: 'shop.example.com', 'x-forwarded-for': '10.1.1.1' }, body: 'hello' });
    assert.equal(r.status, 200);
    const seen = echoed(r);
    assert.equal(seen.name, 'a');
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/basic/x?q=1');
    assert.equal(seen.body, 'hello');
    assert.equal(seen.headers.host, 'shop.example.com');
    assert.equal(seen.headers['x-forwarded-for'], '10.1.1.1, 127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], 'shop.example.com');
  });

  it('streams a chunked request body', async () => {
    const r = await http1(port, { method: 'PUT', path: '/basic', headers: { 'transfer-encoding': 'chunked' }, body: 'x'.repeat(100_000) });
    assert.equal(echoed(r).body.length, 100_000);
  });

  it('streams a response larger than the socket buffers intact', async () => {
    const body = 'y'.repeat(4 * 1024 * 1024);
    const r = await http1(port, { method: 'POST', path: '/basic/big', body });
    assert.equal(echoed(r).body, body);
  });

  it('removes hop-by-hop headers and the ones Connection names', async () => {
    const r = await http1(port, { path: '/basic', headers: { connection: 'keep-alive, x-hop', 'x-hop': '1', 'keep-alive': 'timeout=5', 'proxy-authorization': 'x', 'x-end': '1' } });
    const seen = echoed(r);
    assert.equal(seen.headers['x-hop'], undefined);
    assert.equal(seen.headers['keep-alive'], undefined);
    assert.equal(seen.headers['proxy-authorization'], undefined);
    assert.equal(seen.headers['x-end'], '1');
  });

  it('applies request and response header modifiers, backend filters after rule filters', async () => {
    const r = await http1(port, { path: '/headers', headers: { 'x-add': 'orig', 'x-remove': 'gone' } });
    const seen = echoed(r);
    assert.equal(seen.headers['x-set'], 'backend-wins');
    assert.equal(seen.headers['x-add'], 'orig,added');
    assert.equal(seen.headers['x-remove'], undefined);
    assert.equal(r.headers['x-resp'], 'r');
    assert.equal(r.headers['x-upstream'], undefined);
  });

  it('redirects with the Gateway API port and path rules', async () => {
    const r = await http1(port, { path: '/old/page?x=1', headers: { host: 'shop.example.com:80' } });
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, 'https://shop.example.com/new/page?x=1');
  });

  it('rewrites hostname and prefix', async () => {
    const seen = echoed(await http1(port, { path: '/api/v1/models?a=b' }));
    assert.equal(seen.url, '/v1/models?a=b');
    assert.equal(seen.headers.host, 'internal.example');
  });

  it('sets Host to the endpoint for rewriteHost backends', async () => {
    const seen = echoed(await http1(port, { path: '/rewritehost', headers: { host: 'client.example' } }));
    assert.equal(seen.headers.host, `127.0.0.1:${a.port}`);
  });

  const errorCases = [
    { name: 'no route → 404', path: '/nowhere', status: 404, code: 'route_not_found' },
    { name: 'invalid backend reference → 500', path: '/invalid', status: 500, code: 'no_valid_backend' },
    { name: 'rule without backends → 500', path: '/nobackends', status: 500, code: 'no_valid_backend' },
    { name: 'no ready endpoint → 503', path: '/empty', status: 503, code: 'no_healthy_upstream' },
    { name: 'connection refused → 502', path: '/dead', status: 502, code: 'upstream_connect_failed' },
  ];
  for (const c of errorCases) {
    it(c.name, async () => {
      const r = await http1(port, { path: c.path });
      assert.equal(r.status, c.status);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, c.code);
    });
  }

  it('answers 502 when the upstream drops the connection without a response', async () => {
    const r = await http1(port, { path: '/basic', headers: { 'x-echo-reset': '1' } });
    assert.equal(r.status, 502);
    assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'upstream_reset');
  });

  it('round-robins across endpoints', async () => {
    const names = [];
    for (let i = 0; i < 4; i++) names.push(echoed(await http1(port, { path: '/rr' })).name);
    assert.deepEqual(new Set([names[0], names[1]]), new Set(['a', 'b']));
    assert.equal(names[0], names[2]);
    assert.equal(names[1], names[3]);
  });

  it('never picks a weight-0 backend', async () => {
    for (let i = 0; i < 10; i++) assert.equal(echoed(await http1(port, { path: '/weighted' })).name, 'a');
  });

  it('selects the listener by Host', async () => {
    const seen = echoed(await http1(port, { path: '/basic', headers: { host: 'other.example.com' } }));
    assert.equal(seen.name, 'b');
  });

  it('gives an exact route hostname precedence over a more specific path', async () => {
    const seen = echoed(await http1(port, { path: '/basic', headers: { host: 'foo.example.com' } }));
    assert.equal(seen.name, 'b');
  });

  it('passes upstream status codes through', async () => {
    const r = await http1(port, { path: '/basic', headers: { 'x-echo-status': '418' } });
    assert.equal(r.status, 418);
  });

  it('counts requests by route, backend and status', async () => {
    const text = await registry.metrics();
    assert.match(text, /switchboard_requests_total\{gateway="default\/gw",listener="http",route="default\/basic",backend="svc-a",status="200"\} \d+/);
    assert.match(text, /switchboard_requests_total\{[^}]*route="default\/empty",backend="svc-empty",status="503"\} 1/);
    assert.match(text, /switchboard_upstream_connect_errors_total\{backend="svc-dead"\} 1/);
    assert.match(text, /switchboard_request_duration_seconds_count\{[^}]*route="default\/basic"/);
  });
});
