/**
 * Client authentication and authorization policies through YAML → translate → runtime, with real
 * credentials: JWTs minted by jose (RS256 from a JWKS HTTP server, ES256 inline), password files
 * written once by Debian's htpasswd (committed fixtures), API keys from a Secret and hashed keys
 * from a ConfigMap.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { jwks, testSigner, type TestSigner } from '../../src/proxy/policies/traffic/jwt-authentication/test-keys.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { htpasswdLine, htpasswdLines } from '../support/htpasswd.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';

const REMOTE_ISSUER = 'https://idp.example.com';
const INLINE_ISSUER = 'https://inline.example.com';

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function route(name: string, prefix: string): string {
  return `---\n${stringify({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'default' },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: prefix } }], backendRefs: [{ name: 'echo', port: 8080 }] }] },
  })}`;
}

function policy(name: string, routeName: string, traffic: Record<string, unknown>): string {
  return `---\n${stringify({
    apiVersion: 'switchboard.dev/v1alpha1',
    kind: 'ProxyPolicy',
    metadata: { name, namespace: 'default' },
    spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: routeName }], traffic },
  })}`;
}

describe('authentication and authorization policies', () => {
  let echo: EchoServer;
  let jwksServer: Server;
  let gw: GatewayHarness;
  let remoteKey: TestSigner;
  let rotatedKey: TestSigner;
  let inlineKey: TestSigner;
  let served: string;
  let jwksFetches = 0;

  before(async () => {
    [remoteKey, rotatedKey, inlineKey] = await Promise.all([testSigner('RS256', 'rsa-1'), testSigner('RS256', 'rsa-2'), testSigner('ES256', 'ec-1')]);
    served = jwks(remoteKey);
    jwksServer = createServer((req, res) => {
      jwksFetches++;
      if (req.url !== '/.well-known/jwks.json') res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(served);
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
    echo = await startEchoServer('echo');

    const providers = (cacheDuration?: string) => [
      { issuer: REMOTE_ISSUER, audiences: ['api'], jwks: { remote: { url: jwksUrl, jwksPath: '/.well-known/jwks.json', ...(cacheDuration ? { cacheDuration } : {}) } } },
      { issuer: INLINE_ISSUER, jwks: { inline: jwks(inlineKey) } },
    ];
    // htpasswd -B bcrypt-user, -m md5-user, -s sha-user, -d crypt-user; each password is pw-<format>.
    const passwords = htpasswdLines('gateway-users.htpasswd');
    const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

    gw = await startGateway(gatewayClass() + service('echo', echo) + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: v1
kind: Secret
metadata: { name: api-keys, namespace: default }
stringData:
  plain: sk-plain
  with-metadata: '{"key": "sk-eng", "metadata": {"group": "eng"}}'
---
apiVersion: v1
kind: ConfigMap
metadata: { name: hashed-keys, namespace: default, labels: { api-keys: "true" } }
data:
  ops: '{"keyHash": "sha256:${sha256('sk-ops')}", "metadata": {"group": "ops"}}'
---
apiVersion: v1
kind: Secret
metadata: { name: htpasswd, namespace: default }
stringData:
  .htaccess: |
    # written by Debian's htpasswd
${passwords.map((l) => `    ${l}`).join('\n')}
` +
      route('jwt-strict', '/jwt-strict') + policy('jwt-strict', 'jwt-strict', {
        jwtAuthentication: { providers: providers() },
        authorization: { action: 'Require', policy: { matchExpressions: ['jwt.sub != "mallory"'] } },
      }) +
      route('jwt-optional', '/jwt-optional') + policy('jwt-optional', 'jwt-optional', { jwtAuthentication: { mode: 'Optional', providers: providers() } }) +
      service('jwks', { host: '127.0.0.1', port: (jwksServer.address() as AddressInfo).port }) +
      route('jwt-backendref', '/jwt-backendref') + policy('jwt-backendref', 'jwt-backendref', {
        jwtAuthentication: { providers: [{ issuer: REMOTE_ISSUER, audiences: ['api'], jwks: { remote: { backendRef: { name: 'jwks', port: 8080 }, jwksPath: '/.well-known/jwks.json' } } }] },
      }) +
      route('jwt-permissive', '/jwt-permissive') + policy('jwt-permissive', 'jwt-permissive', {
        jwtAuthentication: { mode: 'Permissive', providers: providers() },
        authorization: { policy: { matchExpressions: ['!has(jwt.sub) || jwt.sub == "alice"'] } },
      }) +
      route('jwt-rotate', '/jwt-rotate') + policy('jwt-rotate', 'jwt-rotate', { jwtAuthentication: { providers: providers('100ms') } }) +
      route('jwt-authz', '/jwt-authz') + policy('jwt-authz', 'jwt-authz', {
        jwtAuthentication: { providers: providers() },
        authorization: { policy: { matchExpressions: ['"admins" in jwt.groups'] } },
      }) + policy('jwt-authz-more', 'jwt-authz', {
        // Rules from several policies accumulate: one more Allow, and a Deny for a blocked tenant.
        authorization: { policy: { matchExpressions: ['jwt.sub == "bob"', 'request.method == "GET"'] } },
      }) + policy('jwt-authz-deny', 'jwt-authz', {
        authorization: { action: 'Deny', policy: { matchExpressions: ['jwt.tenant == "blocked"'] } },
      }) +
      route('keys', '/keys') + policy('keys', 'keys', {
        apiKeyAuthentication: { secretRef: { name: 'api-keys' } },
        authorization: { action: 'Deny', policy: { matchExpressions: ['request.path.startsWith("/keys/eng") && default(apiKey.group, "") != "eng"'] } },
      }) +
      route('keys-permissive', '/keys-permissive') + policy('keys-permissive', 'keys-permissive', { apiKeyAuthentication: { mode: 'Permissive', secretRef: { name: 'api-keys' } } }) +
      route('hashed', '/hashed') + policy('hashed', 'hashed', {
        apiKeyAuthentication: { mode: 'Optional', configMapSelector: { matchLabels: { 'api-keys': 'true' } }, location: { header: { name: 'x-api-key' } } },
        authorization: { policy: { matchExpressions: ['!has(apiKey.name) || apiKey.group == "ops"'] } },
      }) +
      route('basic', '/basic') + policy('basic', 'basic', { basicAuthentication: { secretRef: { name: 'htpasswd' }, realm: 'Team' } }) +
      route('basic-optional', '/basic-optional') + policy('basic-optional', 'basic-optional', {
        basicAuthentication: { mode: 'Optional', users: [htpasswdLine('inline-user.htpasswd')] },
      }) +
      route('missing-secret', '/missing-secret') + policy('missing-secret', 'missing-secret', { apiKeyAuthentication: { secretRef: { name: 'nowhere' } } }),
    );
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await echo?.close();
    await new Promise<void>((resolve) => (jwksServer ? jwksServer.close(() => resolve()) : resolve()));
  });

  const remoteToken = (claims: Record<string, unknown>, signer = remoteKey) => signer.sign({ iss: REMOTE_ISSUER, aud: 'api', ...claims }, { expiresIn: '5m' });

  describe('jwtAuthentication', () => {
    it('Strict: fetches a remote JWKS named by a Service backendRef', async () => {
      assert.equal((await gw.request(80, { path: '/jwt-backendref', headers: bearer(await remoteToken({ sub: 'alice' })) })).status, 200);
      assert.equal((await gw.request(80, { path: '/jwt-backendref' })).status, 401);
    });

    it('Strict: accepts an RS256 token verified with the remote JWKS and forwards it unchanged', async () => {
      const token = await remoteToken({ sub: 'alice' });
      const res = await gw.request(80, { path: '/jwt-strict', headers: bearer(token) });
      assert.equal(res.status, 200);
      assert.equal(res.echo().headers.authorization, `Bearer ${token}`, 'the token is not stripped');
    });

    it('Strict: accepts an ES256 token of the inline provider', async () => {
      const token = await inlineKey.sign({ iss: INLINE_ISSUER, sub: 'carol' });
      assert.equal((await gw.request(80, { path: '/jwt-strict', headers: bearer(token) })).status, 200);
    });

    it('Strict: no token is 401 with a bare Bearer challenge', async () => {
      const res = await gw.request(80, { path: '/jwt-strict' });
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.deepEqual(JSON.parse(res.text).error.code, 'unauthorized');
      assert.equal(echo.seen.filter((r) => r.path === '/jwt-strict' && !r.headers.authorization).length, 0);
    });

    const invalid: { name: string; token: () => Promise<string> }[] = [
      { name: 'a wrong audience', token: () => remoteKey.sign({ iss: REMOTE_ISSUER, aud: 'web' }) },
      { name: 'an expired token', token: () => remoteKey.sign({ iss: REMOTE_ISSUER, aud: 'api' }, { expiresIn: Math.floor(Date.now() / 1000) - 3600 }) },
      { name: 'an unknown issuer', token: () => remoteKey.sign({ iss: 'https://evil.example.com', aud: 'api' }) },
      { name: 'a key the issuer does not publish', token: () => inlineKey.sign({ iss: REMOTE_ISSUER, aud: 'api' }) },
    ];
    for (const c of invalid) {
      it(`Strict: ${c.name} is 401 invalid_token`, async () => {
        const res = await gw.request(80, { path: '/jwt-strict', headers: bearer(await c.token()) });
        assert.equal(res.status, 401);
        assert.match(String(res.headers['www-authenticate']), /^Bearer error="invalid_token"/);
      });
    }

    it('Strict + Require: a valid token of a denied subject is 403', async () => {
      const res = await gw.request(80, { path: '/jwt-strict', headers: bearer(await remoteToken({ sub: 'mallory' })) });
      assert.equal(res.status, 403);
      assert.equal(JSON.parse(res.text).error.code, 'forbidden');
    });

    it('Optional: no token passes, a bad token is 401, a good one passes', async () => {
      assert.equal((await gw.request(80, { path: '/jwt-optional' })).status, 200);
      assert.equal((await gw.request(80, { path: '/jwt-optional', headers: bearer('not.a.jwt') })).status, 401);
      assert.equal((await gw.request(80, { path: '/jwt-optional', headers: bearer(await remoteToken({ sub: 'x' })) })).status, 200);
    });

    it('Permissive: never rejects; verified claims still reach authorization', async () => {
      assert.equal((await gw.request(80, { path: '/jwt-permissive' })).status, 200);
      assert.equal((await gw.request(80, { path: '/jwt-permissive', headers: bearer('garbage') })).status, 200);
      assert.equal((await gw.request(80, { path: '/jwt-permissive', headers: bearer(await remoteToken({ sub: 'alice' })) })).status, 200);
      assert.equal((await gw.request(80, { path: '/jwt-permissive', headers: bearer(await remoteToken({ sub: 'bob' })) })).status, 403);
    });

    const authz: { name: string; claims: Record<string, unknown>; method?: string; status: number }[] = [
      { name: 'an Allow on a claim list', claims: { sub: 'alice', groups: ['admins'] }, status: 200 },
      { name: 'an Allow of another policy (all its expressions hold)', claims: { sub: 'bob' }, status: 200 },
      { name: 'an Allow of which one expression fails', claims: { sub: 'bob' }, method: 'POST', status: 403 },
      { name: 'no Allow matches', claims: { sub: 'carol', groups: ['users'] }, status: 403 },
      { name: 'a matching Deny beats a matching Allow', claims: { sub: 'alice', groups: ['admins'], tenant: 'blocked' }, status: 403 },
    ];
    for (const c of authz) {
      it(`authorization over jwt claims: ${c.name}`, async () => {
        const res = await gw.request(80, { path: '/jwt-authz', method: c.method, headers: bearer(await remoteToken(c.claims)) });
        assert.equal(res.status, c.status);
      });
    }

    it('picks up a rotated key from the remote JWKS', async () => {
      assert.equal((await gw.request(80, { path: '/jwt-rotate', headers: bearer(await remoteToken({ sub: 'a' })) })).status, 200);
      const before = jwksFetches;
      served = jwks(remoteKey, rotatedKey);
      const token = await remoteToken({ sub: 'a' }, rotatedKey);
      let status = 0;
      // The route caches the JWKS for 100 ms; a few bounded tries see the new document.
      for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
        if (attempt > 0) await sleep(100);
        status = (await gw.request(80, { path: '/jwt-rotate', headers: bearer(token) })).status;
      }
      assert.equal(status, 200);
      assert.ok(jwksFetches > before, 'the JWKS was fetched again');
    });
  });

  describe('apiKeyAuthentication', () => {
    it('accepts plain and JSON keys from a Secret and forwards the request', async () => {
      assert.equal((await gw.request(80, { path: '/keys', headers: bearer('sk-plain') })).status, 200);
      assert.equal((await gw.request(80, { path: '/keys', headers: bearer('sk-eng') })).status, 200);
    });

    it('Strict: a missing or wrong key is 401 with a Bearer challenge', async () => {
      for (const headers of [{}, bearer('sk-wrong'), basic('a', 'b')]) {
        const res = await gw.request(80, { path: '/keys', headers });
        assert.equal(res.status, 401);
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
    });

    it('key metadata is visible to authorization as apiKey.<field>', async () => {
      assert.equal((await gw.request(80, { path: '/keys/eng', headers: bearer('sk-eng') })).status, 200);
      assert.equal((await gw.request(80, { path: '/keys/eng', headers: bearer('sk-plain') })).status, 403);
    });

    it('Permissive: a wrong key still passes', async () => {
      assert.equal((await gw.request(80, { path: '/keys-permissive', headers: bearer('sk-wrong') })).status, 200);
      assert.equal((await gw.request(80, { path: '/keys-permissive' })).status, 200);
    });

    it('Optional with a ConfigMap keyHash and a custom header', async () => {
      assert.equal((await gw.request(80, { path: '/hashed', headers: { 'x-api-key': 'sk-ops' } })).status, 200);
      assert.equal((await gw.request(80, { path: '/hashed' })).status, 200);
      const wrong = await gw.request(80, { path: '/hashed', headers: { 'x-api-key': 'sk-plain' } });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers['www-authenticate'], undefined, 'no standard scheme for a custom header');
    });

    it('a policy whose Secret is missing fails closed with 500', async () => {
      assert.equal((await gw.request(80, { path: '/missing-secret', headers: bearer('sk-plain') })).status, 500);
    });
  });

  describe('basicAuthentication', () => {
    for (const [user, password] of [['bcrypt-user', 'pw-bcrypt'], ['md5-user', 'pw-md5'], ['sha-user', 'pw-sha'], ['crypt-user', 'pw-crypt']]) {
      it(`accepts ${user} (htpasswd from a Secret) and rejects a wrong password`, async () => {
        const ok = await gw.request(80, { path: '/basic', headers: basic(user, password) });
        assert.equal(ok.status, 200);
        const bad = await gw.request(80, { path: '/basic', headers: basic(user, 'nope-nope') });
        assert.equal(bad.status, 401);
        assert.equal(bad.headers['www-authenticate'], 'Basic realm="Team", charset="UTF-8"');
      });
    }

    it('Strict: no credential is 401 with the realm', async () => {
      const res = await gw.request(80, { path: '/basic' });
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /^Basic realm="Team"/);
    });

    it('Optional with inline users and the default realm', async () => {
      assert.equal((await gw.request(80, { path: '/basic-optional' })).status, 200);
      assert.equal((await gw.request(80, { path: '/basic-optional', headers: basic('inline-user', 'pw-inline') })).status, 200);
      const bad = await gw.request(80, { path: '/basic-optional', headers: basic('inline-user', 'wrong') });
      assert.equal(bad.status, 401);
      assert.match(String(bad.headers['www-authenticate']), /^Basic realm="Restricted"/);
    });
  });
});
