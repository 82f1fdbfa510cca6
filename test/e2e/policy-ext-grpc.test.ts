/**
 * Traffic policies backed by gRPC services, through YAML → translate → a listening gateway:
 * extAuth against a real Envoy ext_authz server (connect-node over h2c) and a global rateLimit
 * against a rate-limit service speaking Envoy's RLS gRPC API (connect-node, counting in memory:
 * test/ext/rate-limit-service.ts). Each limit window starts at its descriptor's first hit, so no
 * case depends on the clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { HeaderValueOption_HeaderAppendAction } from '../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema, type CheckRequest } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { RateLimitUnit } from '../../src/proxy/ext/gen/envoy/type/v3/ratelimit_unit_pb.js';
import { StatusCode } from '../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { startRateLimitService, type RunningRateLimitService } from '../ext/rate-limit-service.ts';
import { closedPort, startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, prefixRoute, routeTrafficPolicy, service } from '../support/manifests.ts';

/** Requests per minute the rate-limit service grants each `user` descriptor value. */
const USER_LIMIT = 2;

const route = (name: string, prefix: string) => prefixRoute(name, prefix, 'echo');
const policy = (name: string, traffic: string) => routeTrafficPolicy(name, name, traffic);
const overwrite = (key: string, value: string) => ({ header: { key, value }, appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD });

/** ext_authz: `x-user: mallory` is denied with 401 and a challenge; everyone else is allowed with mutations. */
function startAuthz(seen: CheckRequest[]): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(Authorization, {
    check(req) {
      seen.push(req);
      const user = req.attributes?.request?.http?.headers['x-user'] ?? '';
      if (user === 'mallory') {
        return create(CheckResponseSchema, {
          status: { code: 7 }, // PERMISSION_DENIED
          httpResponse: { case: 'deniedResponse', value: { status: { code: StatusCode.Unauthorized }, body: 'not you', headers: [overwrite('www-authenticate', 'Bearer realm="e2e"')] } },
        });
      }
      return create(CheckResponseSchema, {
        status: { code: 0 },
        httpResponse: {
          case: 'okResponse',
          value: { headers: [overwrite('x-auth-user', user)], headersToRemove: ['authorization'], responseHeadersToAdd: [overwrite('x-authz', 'checked')] },
        },
      });
    },
  }));
}

describe('gRPC-backed traffic policies end to end (extAuth, global rateLimit)', () => {
  let echo: EchoServer;
  let authz: RunningServer;
  let rls: RunningRateLimitService;
  let gw: GatewayHarness;
  const checks: CheckRequest[] = [];

  before(async () => {
    echo = await startEchoServer('echo');
    authz = await startAuthz(checks);
    rls = await startRateLimitService({ rules: () => ({ requestsPerUnit: USER_LIMIT, unit: RateLimitUnit.MINUTE }) });
    const dead = await closedPort();
    gw = await startGateway(
      gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }]) +
      route('authz', '/authz') + policy('authz', `extAuth:
  url: ${authz.url}
  grpc: { contextExtensions: { route: authz } }`) +
      route('authz-down', '/authz-down') + policy('authz-down', `extAuth: { url: "http://127.0.0.1:${dead}", grpc: {} }`) +
      route('limited', '/limited') + policy('limited', `rateLimit:
  global:
    url: ${rls.url}
    domain: e2e
    descriptors: [{ entries: [{ name: user, expression: 'request.headers["x-user"]' }] }]`),
    );
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await rls?.close();
    await authz?.close();
    await echo?.close();
  });

  it('extAuth gRPC allow: header mutations reach the upstream, response headers the client', async () => {
    const res = await gw.request(80, { path: '/authz/items?x=1', headers: { 'x-user': 'alice', authorization: 'Bearer alice-token' } });
    assert.equal(res.status, 200);
    const upstream = res.echo();
    assert.equal(upstream.headers['x-auth-user'], 'alice');
    assert.equal(upstream.headers.authorization, undefined, 'headersToRemove applies upstream');
    assert.equal(res.headers['x-authz'], 'checked');
    const attrs = checks.at(-1)?.attributes;
    assert.equal(attrs?.request?.http?.path, '/authz/items?x=1');
    assert.equal(attrs?.request?.http?.method, 'GET');
    assert.deepEqual(attrs?.contextExtensions, { route: 'authz' });
  });

  it('extAuth gRPC deny: the service status, body and headers, nothing upstream', async () => {
    const seen = echo.seen.length;
    const res = await gw.request(80, { path: '/authz', headers: { 'x-user': 'mallory' } });
    assert.equal(res.status, 401);
    assert.equal(res.text, 'not you');
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="e2e"');
    assert.equal(echo.seen.length, seen, 'a denied request never reaches the upstream');
  });

  it('extAuth gRPC unreachable: FailClosed (the default) denies with 403', async () => {
    const seen = echo.seen.length;
    const res = await gw.request(80, { path: '/authz-down', headers: { 'x-user': 'alice' } });
    assert.equal(res.status, 403);
    assert.equal(echo.seen.length, seen);
  });

  it('global rateLimit: the service counts per descriptor, 429 with retry-after past the limit', async () => {
    const alice = { 'x-user': 'alice' };
    const first = await gw.request(80, { path: '/limited', headers: alice });
    assert.equal(first.status, 200);
    assert.equal(first.headers['x-ratelimit-limit'], String(USER_LIMIT));
    assert.equal(first.headers['x-ratelimit-remaining'], String(USER_LIMIT - 1));
    assert.equal((await gw.request(80, { path: '/limited', headers: alice })).status, 200);

    const seen = echo.seen.length;
    const limited = await gw.request(80, { path: '/limited', headers: alice });
    assert.equal(limited.status, 429);
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${String(limited.headers['retry-after'])}`);
    assert.equal(JSON.parse(limited.text).error.code, 'rate_limited');
    assert.equal(echo.seen.length, seen, 'a limited request never reaches the upstream');
    assert.equal(rls.count('e2e', [['user', 'alice']]), USER_LIMIT + 1, 'the gateway had the service count every request');

    assert.equal((await gw.request(80, { path: '/limited', headers: { 'x-user': 'bob' } })).status, 200, 'another descriptor value has its own budget');
  });
});
