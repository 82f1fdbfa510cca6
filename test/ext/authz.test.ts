/** External authorization against real servers: gRPC ext_authz (connect-node) and an HTTP auth service. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { createActivation } from '../../src/cel/index.ts';
import { createExtAuthzClient, type AuthzDecision, type DownstreamRequest, type ExtAuthConfig } from '../../src/proxy/ext/authz/index.ts';
import { HeaderValueOption_HeaderAppendAction } from '../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema, type CheckRequest } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { StatusCode } from '../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { closedPort, startGrpcServer, startHttpServer, type RunningServer } from './servers.ts';

const request: DownstreamRequest = {
  method: 'POST',
  url: '/v1/chat?x=1',
  host: 'gw.example.com',
  scheme: 'https',
  protocol: 'HTTP/2',
  headers: { authorization: 'Bearer alice', 'x-user': 'alice', 'x-trace': ['a', 'b'] },
  source: { address: '10.0.0.7', port: 51000 },
  destination: { address: '10.0.0.1', port: 443 },
  body: new TextEncoder().encode('{"q":1}'),
  id: 'req-1',
};
const activation = createActivation({
  request: { method: request.method, url: request.url, host: request.host, headers: request.headers },
  jwt: { sub: 'alice', groups: ['dev'] },
});
const header = (key: string, value: string, appendAction = HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD) => ({ header: { key, value }, appendAction });

function expectAllowed(d: AuthzDecision): Extract<AuthzDecision, { allowed: true }> {
  assert.equal(d.allowed, true, JSON.stringify(d));
  return d as Extract<AuthzDecision, { allowed: true }>;
}
function expectDenied(d: AuthzDecision): Extract<AuthzDecision, { allowed: false }> {
  assert.equal(d.allowed, false, JSON.stringify(d));
  return d as Extract<AuthzDecision, { allowed: false }>;
}

describe('gRPC ext_authz', () => {
  let server: RunningServer;
  const seen: CheckRequest[] = [];
  before(async () => {
    server = await startGrpcServer((router) => router.service(Authorization, {
      async check(req, ctx) {
        seen.push(req);
        const user = req.attributes?.request?.http?.headers['x-user'];
        if (user === 'slow') await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        if (user === 'oversized') {
          // An allow in a message just over the 16 MiB the gateway reads: the client must refuse it.
          return create(CheckResponseSchema, { status: { code: 0, message: 'x'.repeat(17 * 1024 * 1024) }, httpResponse: { case: 'okResponse', value: {} } });
        }
        if (user === 'mallory') {
          return create(CheckResponseSchema, {
            status: { code: 7 },
            httpResponse: { case: 'deniedResponse', value: { status: { code: StatusCode.TooManyRequests }, body: 'go away', headers: [header('x-reason', 'blocked')] } },
          });
        }
        return create(CheckResponseSchema, {
          status: { code: 0 },
          httpResponse: {
            case: 'okResponse',
            value: {
              headers: [header('x-auth-user', user ?? ''), header('x-tag', 'one', HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD)],
              headersToRemove: ['authorization'],
              responseHeadersToAdd: [header('x-authz', 'checked')],
            },
          },
          dynamicMetadata: { tier: 'gold' },
        });
      },
    }));
  });
  after(() => server.close());

  it('allows with header mutations and sends the request attributes', async () => {
    const client = createExtAuthzClient({ url: server.url, grpc: { contextExtensions: { team: 'ml' } } });
    try {
      const d = expectAllowed(await client.check(request, activation));
      assert.deepEqual(d.requestHeaders, { set: [['x-auth-user', 'alice']], add: [['x-tag', 'one']], remove: ['authorization'] });
      assert.deepEqual(d.responseHeaders, [['x-authz', 'checked']]);
      assert.deepEqual(d.metadata, { tier: 'gold' });
      const http = seen.at(-1)?.attributes?.request?.http;
      assert.equal(http?.method, 'POST');
      assert.equal(http?.path, '/v1/chat?x=1');
      assert.equal(http?.query, 'x=1');
      assert.equal(http?.host, 'gw.example.com');
      assert.equal(http?.scheme, 'https');
      assert.equal(http?.protocol, 'HTTP/2');
      assert.equal(http?.headers['x-trace'], 'a,b');
      assert.equal(http?.rawBody.length, 0, 'no body without forwardBody');
      const attrs = seen.at(-1)?.attributes;
      assert.deepEqual(attrs?.contextExtensions, { team: 'ml' });
      const source = attrs?.source?.address?.address;
      assert.equal(source?.case, 'socketAddress');
      assert.equal(source?.value.address, '10.0.0.7');
      // No requestMetadata: the verified JWT's claims travel under the JWT filter's namespace.
      assert.deepEqual(attrs?.metadataContext?.filterMetadata['envoy.filters.http.jwt_authn'], { payload: { sub: 'alice', groups: ['dev'] } });
    } finally {
      client.close();
    }
  });

  it('sends requestMetadata from CEL as metadata_context.filter_metadata', async () => {
    const client = createExtAuthzClient({ url: server.url, grpc: { requestMetadata: { 'acme.io': '{"user": jwt.sub, "path": request.path}', plain: '"v"' } } });
    try {
      expectAllowed(await client.check(request, activation));
      assert.deepEqual(seen.at(-1)?.attributes?.metadataContext?.filterMetadata, { 'acme.io': { user: 'alice', path: '/v1/chat' }, plain: { value: 'v' } });
    } finally {
      client.close();
    }
  });

  it('denies with the status, body and headers of DeniedHttpResponse', async () => {
    const client = createExtAuthzClient({ url: server.url });
    try {
      const d = expectDenied(await client.check({ ...request, headers: { 'x-user': 'mallory' } }, activation));
      assert.deepEqual(d, { allowed: false, status: 429, body: 'go away', headers: [['x-reason', 'blocked']], reason: 'denied' });
    } finally {
      client.close();
    }
  });

  it('forwards the body up to forwardBody.maxSize and rejects bigger bodies', async () => {
    const client = createExtAuthzClient({ url: server.url, forwardBody: { maxSize: 7 } });
    try {
      assert.equal(client.bodyLimit, 7);
      expectAllowed(await client.check(request, activation));
      assert.equal(new TextDecoder().decode(seen.at(-1)?.attributes?.request?.http?.rawBody), '{"q":1}');
      const calls = seen.length;
      const d = expectDenied(await client.check({ ...request, body: new Uint8Array(8) }, activation));
      assert.equal(d.status, 413);
      assert.equal(d.reason, 'body_too_large');
      assert.equal(seen.length, calls, 'an oversized body never reaches the service');
    } finally {
      client.close();
    }
  });

  it('refuses an allow over the 16 MiB message limit, and says so', async () => {
    // A deadline far away: the refusal must come from the size cap, not the clock.
    const client = createExtAuthzClient({ url: server.url }, { timeoutMs: 30_000 });
    try {
      const d = expectDenied(await client.check({ ...request, headers: { 'x-user': 'oversized' } }, activation));
      assert.equal(d.reason, 'unavailable');
      assert.match(d.cause ?? '', /^gRPC ResourceExhausted: .*readMaxBytes 16777216/);
    } finally {
      client.close();
    }
  });

  const failureCases: { name: string; config: (url: string) => ExtAuthConfig; slow: boolean; allowed: boolean; cause: RegExp }[] = [
    { name: 'slow service, FailClosed: deadline → 403', config: (url) => ({ url }), slow: true, allowed: false, cause: /^no answer within the 100 ms deadline$/ },
    { name: 'slow service, FailOpen: deadline → allowed', config: (url) => ({ url, failureMode: 'FailOpen' }), slow: true, allowed: true, cause: /^no answer within the 100 ms deadline$/ },
    { name: 'service down, FailClosed → 403', config: () => ({ url: 'down' }), slow: false, allowed: false, cause: /^gRPC Unavailable: .*ECONNREFUSED/ },
    { name: 'service down, FailOpen → allowed', config: () => ({ url: 'down', failureMode: 'FailOpen' }), slow: false, allowed: true, cause: /^gRPC Unavailable: .*ECONNREFUSED/ },
  ];
  for (const c of failureCases) {
    it(c.name, async () => {
      const config = c.config(server.url);
      const url = config.url === 'down' ? `http://127.0.0.1:${await closedPort()}` : server.url;
      const client = createExtAuthzClient({ ...config, url }, { timeoutMs: 100 });
      try {
        const d = await client.check(c.slow ? { ...request, headers: { 'x-user': 'slow' } } : request, activation);
        if (c.allowed) assert.equal(expectAllowed(d).failedOpen, true);
        else assert.deepEqual({ ...expectDenied(d), cause: undefined }, { allowed: false, status: 403, body: '', headers: [], reason: 'unavailable', cause: undefined });
        // Why, for the log: a deadline and a refused connection are the same 403 to the client.
        assert.match((d as { cause?: string }).cause ?? '', c.cause);
      } finally {
        client.close();
      }
    });
  }
});

describe('HTTP ext auth', () => {
  let server: RunningServer;
  const seen: { method?: string; url?: string; headers: Record<string, unknown>; body: string }[] = [];
  before(async () => {
    server = await startHttpServer((req, body, res) => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: body.toString() });
      if (req.url === '/slow') {
        setTimeout(() => res.writeHead(200).end('late'), 1000);
        return;
      }
      if (req.headers.authorization === 'Bearer alice') {
        res.writeHead(200, { 'x-user-id': 'u-1', 'x-internal': 'secret', 'x-tier': 'gold' }).end('ok');
      } else {
        res.writeHead(401, { 'www-authenticate': 'Bearer', 'x-internal': 'secret', 'content-type': 'text/plain' }).end('who are you');
      }
    });
  });
  after(() => server.close());

  it('allows on 200, copies allowedResponseHeaders and exposes responseMetadata', async () => {
    const client = createExtAuthzClient({
      url: `${server.url}/auth`,
      http: {
        path: '"/check" + request.path',
        addRequestHeaders: { 'x-original-host': 'request.host' },
        allowedResponseHeaders: ['X-User-Id'],
        responseMetadata: { tier: 'response.headers["x-tier"]', code: 'response.code' },
      },
    });
    try {
      const d = expectAllowed(await client.check(request, activation));
      assert.deepEqual(d.requestHeaders, { set: [['x-user-id', 'u-1']], add: [], remove: [] });
      assert.deepEqual(d.metadata, { tier: 'gold', code: 200 });
      const sent = seen.at(-1);
      assert.equal(sent?.url, '/auth/check/v1/chat');
      assert.equal(sent?.method, 'POST');
      assert.equal(sent?.headers.authorization, 'Bearer alice');
      assert.equal(sent?.headers['x-original-host'], 'gw.example.com');
      assert.equal(sent?.headers['x-user'], undefined, 'only allowedRequestHeaders (default Authorization) are sent');
      assert.equal(sent?.body, '', 'no body without forwardBody or body');
    } finally {
      client.close();
    }
  });

  it('denies on any other status with the service status and body', async () => {
    const client = createExtAuthzClient({ url: server.url, http: {} });
    try {
      const d = expectDenied(await client.check({ ...request, headers: { authorization: 'Bearer bob' } }, activation));
      assert.equal(d.status, 401);
      assert.equal(d.body, 'who are you');
      assert.deepEqual(d.headers, [['www-authenticate', 'Bearer'], ['content-type', 'text/plain']]);
      assert.equal(seen.at(-1)?.url, '/v1/chat?x=1', 'default path is the original one');
    } finally {
      client.close();
    }
  });

  it('redirects on failure when http.redirect is set, and sends the body CEL', async () => {
    const client = createExtAuthzClient({ url: server.url, http: { redirect: '"/login?next=" + request.path', body: '{"user": "bob"}' } });
    try {
      const d = expectDenied(await client.check({ ...request, method: 'GET', headers: {} }, activation));
      assert.deepEqual(d, { allowed: false, status: 302, body: '', headers: [['location', '/login?next=/v1/chat']], reason: 'denied' });
      assert.equal(seen.at(-1)?.body, '{"user":"bob"}');
      assert.equal(seen.at(-1)?.method, 'POST', 'a GET carrying a body is sent as POST');
    } finally {
      client.close();
    }
  });

  it('says why when the service answers after the deadline', async () => {
    const client = createExtAuthzClient({ url: server.url, http: { path: '"/slow"' } }, { timeoutMs: 100 });
    try {
      const d = expectDenied(await client.check(request, activation));
      assert.deepEqual([d.status, d.reason, d.cause], [403, 'unavailable', 'no answer within the 100 ms deadline']);
    } finally {
      client.close();
    }
  });

  it('fails closed or open when the service is down', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const closed = createExtAuthzClient({ url, http: {} });
    const open = createExtAuthzClient({ url, http: {}, failureMode: 'FailOpen' });
    try {
      const denied = expectDenied(await closed.check(request, activation));
      assert.equal(denied.reason, 'unavailable');
      assert.match(denied.cause ?? '', /^ECONNREFUSED: /);
      const passed = expectAllowed(await open.check(request, activation));
      assert.equal(passed.failedOpen, true);
      assert.match(passed.cause ?? '', /^ECONNREFUSED: /);
    } finally {
      closed.close();
      open.close();
    }
  });
});

describe('ext auth result cache', () => {
  let server: RunningServer;
  let calls = 0;
  before(async () => {
    server = await startHttpServer((req, _body, res) => {
      calls++;
      const auth = req.headers.authorization ?? '';
      res.writeHead(auth.startsWith('Bearer ') && auth !== 'Bearer bob' ? 200 : 403, { 'x-ttl': '10s' }).end();
    });
  });
  after(() => server.close());

  const act = (auth: string) => createActivation({ request: { method: 'GET', url: '/', headers: { authorization: auth } } });
  const req = (auth: string): DownstreamRequest => ({ ...request, headers: { authorization: auth } });

  it('answers repeated keys from the cache until the TTL passes', async () => {
    let now = 1_000_000;
    const client = createExtAuthzClient({ url: server.url, http: {}, cache: { key: ['request.headers["authorization"]'], ttl: '30s' } }, { now: () => now });
    try {
      calls = 0;
      expectAllowed(await client.check(req('Bearer alice'), act('Bearer alice')));
      expectAllowed(await client.check(req('Bearer alice'), act('Bearer alice')));
      expectDenied(await client.check(req('Bearer bob'), act('Bearer bob')));
      expectDenied(await client.check(req('Bearer bob'), act('Bearer bob')));
      assert.equal(calls, 2, 'one call per key; denials are cached too');
      now += 30_001;
      expectAllowed(await client.check(req('Bearer alice'), act('Bearer alice')));
      assert.equal(calls, 3, 'expired entries go back to the service');
    } finally {
      client.close();
    }
  });

  it('bypasses the cache when a key expression fails, and evicts the least recently used entry', async () => {
    const now = 1_000_000;
    const client = createExtAuthzClient({ url: server.url, http: { responseMetadata: { ttl: 'response.headers["x-ttl"]' } }, cache: { key: ['request.headers["authorization"]'], ttl: 'duration(extauthz.ttl)', maxEntries: 2 } }, { now: () => now });
    try {
      calls = 0;
      const noHeader = createActivation({ request: { method: 'GET', url: '/' } });
      await client.check(req(''), noHeader);
      await client.check(req(''), noHeader);
      assert.equal(calls, 2, 'a failing key neither reads nor writes the cache');
      for (const who of ['a', 'b', 'a', 'c', 'a', 'b']) await client.check(req(`Bearer ${who}`), act(`Bearer ${who}`));
      // a, b, (a hit), c evicts b, (a hit), b again: four calls.
      assert.equal(calls, 6);
    } finally {
      client.close();
    }
  });
});
