/**
 * Backend policy auth and health through YAML: credentials written at each location (default
 * Authorization Bearer, header with prefix, query parameter, cookie, extra credentials from a
 * Secret), jwtSign verified with the public key, and passive health evicting a failing endpoint.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import { stringify } from 'yaml';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

const doc = (o: unknown) => `---\n${stringify(o)}`;
const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const AUTH_RULES: Record<string, Record<string, unknown>> = {
  bearer: { key: 'sk-default' },
  header: { key: 'k-123', location: { header: { name: 'x-api-key' } }, credentials: [{ location: { header: { name: 'x-extra' } }, secretRef: { name: 'extra', key: 'token' } }] },
  query: { key: 'q-456', location: { queryParameter: { name: 'api_key' } } },
  cookie: { key: 'c-789', location: { cookie: { name: 'session' } } },
  jwt: { jwtSign: { signingKeyRef: { name: 'signer' }, alg: 'ES256', kid: 'k1', claims: { iss: 'switchboard', aud: 'upstream' }, ttl: '60s' } },
  // A cloud-B Secret without clientID, tenantID and clientSecret cannot work: refused when compiled.
  unsupported: { cloudB: { secretRef: { name: 'extra' } } },
};

interface TokenEndpoint extends Server { forms: URLSearchParams[]; authorizations: (string | undefined)[] }

/** An RFC 8693 token endpoint: answers `exchanged-<subject_token>` valid for 60 s. */
function startTokenEndpoint(): Promise<TokenEndpoint> {
  const server = Object.assign(createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
      const form = new URLSearchParams(body);
      server.forms.push(form);
      server.authorizations.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        access_token: `exchanged-${form.get('subject_token') ?? ''}`, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 60,
      }));
    });
  }), { forms: [] as URLSearchParams[], authorizations: [] as (string | undefined)[] });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function startFailingServer(): Promise<Server & { hits: number }> {
  const server = Object.assign(createServer((_req, res) => {
    server.hits += 1;
    res.writeHead(503).end('down');
  }), { hits: 0 });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('backend policy: auth and health', () => {
  let echo: EchoServer;
  let failing: Server & { hits: number };
  let tokens: TokenEndpoint;
  let gw: GatewayHarness;

  before(async () => {
    echo = await startEchoServer('healthy');
    failing = await startFailingServer();
    tokens = await startTokenEndpoint();
    const exchange = { oauthTokenExchange: {
      url: `http://127.0.0.1:${(tokens.address() as AddressInfo).port}`, path: '/oauth/token', audiences: ['api'], scopes: ['read', 'write'],
      clientAuth: { clientId: 'gateway', secretRef: { name: 'oauth-client' } }, additionalParams: { tenant: 'request.headers["x-tenant"]' },
    } };
    const failingPort = (failing.address() as AddressInfo).port;
    const rules = [...Object.keys(AUTH_RULES), 'health', 'transform', 'exchange'].map((name) => ({
      name,
      matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
      backendRefs: [{ name: name === 'health' ? 'pair' : 'api', port: 8080 }],
    }));
    const policies = Object.entries(AUTH_RULES).map(([rule, auth]) => ({ name: `auth-${rule}`, rule, backend: { auth } }));
    policies.push({ name: 'exchange', rule: 'exchange', backend: { auth: exchange } });
    policies.push({ name: 'transform', rule: 'transform', backend: { transformation: {
      request: { set: [{ name: 'x-backend', value: 'request.method + " via backend policy"' }], remove: ['x-drop'] },
      response: { set: [{ name: 'x-upstream-status', value: 'string(response.code)' }] },
    } } } as never);
    policies.push({ name: 'health', rule: 'health', backend: { health: { unhealthyCondition: 'response.code >= 500', eviction: { duration: '60s' } } } } as never);
    gw = await startGateway(gatewayClass() + service('api', echo) + gateway('gw', [{ name: 'http', port: 80 }])
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'extra', namespace: 'default' }, stringData: { token: 'from-secret' } })
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'oauth-client', namespace: 'default' }, stringData: { clientSecret: 's3cret' } })
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'signer', namespace: 'default' }, stringData: { signingKey: signer.privateKey.export({ type: 'sec1', format: 'pem' }) } })
      + doc({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'pair', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 8080 }] } })
      + [echo.port, failingPort].map((port, i) => doc({
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
        metadata: { name: `pair-${i}`, namespace: 'default', labels: { 'kubernetes.io/service-name': 'pair' } },
        ports: [{ name: 'http', port, protocol: 'TCP' }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      })).join('')
      + doc({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'default' }, spec: { parentRefs: [{ name: 'gw' }], rules } })
      + policies.map((p) => doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: p.name, namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r', sectionName: p.rule }], backend: p.backend },
      })).join(''));
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
    await new Promise((resolve) => failing?.close(resolve));
    await new Promise((resolve) => tokens?.close(resolve));
  });

  const locations = [
    { name: 'default Authorization Bearer, replacing the client value', path: '/bearer', headers: { authorization: 'Bearer client' }, expect: { header: ['authorization', 'Bearer sk-default'] } },
    { name: 'a header without prefix, plus an extra credential', path: '/header', expect: { header: ['x-api-key', 'k-123'], extra: ['x-extra', 'from-secret'] } },
    { name: 'a query parameter, keeping the client query', path: '/query?a=1&api_key=client', expect: { query: { a: '1', api_key: 'q-456' } } },
    { name: 'a cookie, keeping the client cookies', path: '/cookie', headers: { cookie: 'theme=dark; session=client' }, expect: { header: ['cookie', 'theme=dark; session=c-789'] } },
  ] as const;
  for (const c of locations) {
    it(`writes ${c.name}`, async () => {
      const res = await gw.request(80, { path: c.path, headers: 'headers' in c ? { ...c.headers } : {} });
      assert.equal(res.status, 200, res.text);
      const seen = res.echo();
      const expect = c.expect as { header?: readonly [string, string]; extra?: readonly [string, string]; query?: Record<string, string> };
      if (expect.header) assert.equal(seen.headers[expect.header[0]], expect.header[1]);
      if (expect.extra) assert.equal(seen.headers[expect.extra[0]], expect.extra[1]);
      if (expect.query) assert.deepEqual(seen.query, expect.query);
    });
  }

  it('signs a fresh JWT per request with jwtSign', async () => {
    const res = await gw.request(80, { path: '/jwt' });
    assert.equal(res.status, 200, res.text);
    const header = res.echo().headers.authorization as string;
    assert.match(header, /^Bearer /);
    const { payload, protectedHeader } = await jwtVerify(header.slice('Bearer '.length), signer.publicKey, { issuer: 'switchboard', audience: 'upstream' });
    assert.equal(protectedHeader.kid, 'k1');
    assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), 60);
  });

  it('runs the backend transformation on requests and responses', async () => {
    const res = await gw.request(80, { path: '/transform', headers: { 'x-drop': 'secret', 'x-keep': '1' } });
    assert.equal(res.status, 200, res.text);
    const seen = res.echo();
    assert.equal(seen.headers['x-backend'], 'GET via backend policy');
    assert.equal(seen.headers['x-drop'], undefined);
    assert.equal(seen.headers['x-keep'], '1');
    assert.equal(res.headers['x-upstream-status'], '200');
  });

  it('exchanges the client token (RFC 8693) with client_secret_basic and caches the result', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await gw.request(80, { path: '/exchange', headers: { authorization: 'Bearer user-token', 'x-tenant': 'acme' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.echo().headers.authorization, 'Bearer exchanged-user-token');
    }
    assert.equal(tokens.forms.length, 1, 'the second request is served from the cache');
    const form = Object.fromEntries(tokens.forms[0]);
    assert.deepEqual(form, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: 'user-token',
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', audience: 'api', scope: 'read write', tenant: 'acme',
    });
    assert.equal(tokens.authorizations[0], `Basic ${Buffer.from('gateway:s3cret').toString('base64')}`);
  });

  it('rejects a request without a subject token to exchange', async () => {
    const res = await gw.request(80, { path: '/exchange' });
    assert.equal(res.status, 401, res.text);
  });

  it('fails closed on a backend credential that cannot work', async () => {
    const res = await gw.request(80, { path: '/unsupported' });
    assert.equal(res.status, 500);
    assert.match(res.text, /policy_invalid/);
  });

  it('evicts an endpoint whose response meets unhealthyCondition', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await gw.request(80, { path: '/health' })).status);
    assert.equal(failing.hits, 1, `statuses: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 200).length, 5);
  });
});
