import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { silentLogger } from '../../../../common/logger.ts';
import type { AuthMode, JwtAuthenticationPolicy } from '../../../../ir/policy.ts';
import { testContext } from '../../../testing/credential-context.ts';
import { compileJwtAuthentication } from './jwt-authentication.ts';
import { jwks, testSigner, type TestSigner } from './test-keys.ts';

const ISSUER = 'https://idp.example.com';
let rsa: TestSigner;
let ec: TestSigner;
let stranger: TestSigner;

function step(mode: AuthMode, overrides: Partial<JwtAuthenticationPolicy> = {}) {
  const member: JwtAuthenticationPolicy = {
    mode,
    providers: [
      { issuer: ISSUER, audiences: ['api'], jwks: { inline: jwks(rsa, ec) } },
      { issuer: 'https://other.example.com', jwks: { inline: jwks(stranger) } },
    ],
    ...overrides,
  };
  return compileJwtAuthentication(member, { logger: silentLogger, policy: { sources: {}, jwtAuthentication: member } });
}

describe('jwtAuthentication', () => {
  before(async () => {
    [rsa, ec, stranger] = await Promise.all([testSigner('RS256', 'rsa-1'), testSigner('ES256', 'ec-1'), testSigner('RS256', 'other-1')]);
  });

  const good = () => rsa.sign({ iss: ISSUER, aud: 'api', sub: 'alice' }, { expiresIn: '5m' });
  const cases: { name: string; mode: AuthMode; token?: () => Promise<string>; raw?: string; ok: boolean; reason?: RegExp }[] = [
    { name: 'Strict: RS256 token', mode: 'Strict', token: good, ok: true },
    { name: 'Strict: ES256 token', mode: 'Strict', token: () => ec.sign({ iss: ISSUER, aud: ['x', 'api'], sub: 'bob' }, { expiresIn: '5m' }), ok: true },
    { name: 'Strict: token without kid (tries every key)', mode: 'Strict', token: () => ec.sign({ iss: ISSUER, aud: 'api' }, { kid: null }), ok: true },
    { name: 'Strict: provider without audiences accepts any', mode: 'Strict', token: () => stranger.sign({ iss: 'https://other.example.com', aud: 'anything' }), ok: true },
    { name: 'Strict: expired', mode: 'Strict', token: () => rsa.sign({ iss: ISSUER, aud: 'api' }, { expiresIn: Math.floor(Date.now() / 1000) - 3600 }), ok: false, reason: /expired/ },
    { name: 'Strict: wrong audience', mode: 'Strict', token: () => rsa.sign({ iss: ISSUER, aud: 'web' }), ok: false, reason: /aud claim/ },
    { name: 'Strict: unknown issuer', mode: 'Strict', token: () => rsa.sign({ iss: 'https://evil.example.com', aud: 'api' }), ok: false, reason: /issuer/ },
    { name: 'Strict: signed by another provider\'s key', mode: 'Strict', token: () => stranger.sign({ iss: ISSUER, aud: 'api' }), ok: false, reason: /no key/ },
    { name: 'Strict: garbage', mode: 'Strict', raw: 'not-a-jwt', ok: false, reason: /not a JWT/ },
    { name: 'Strict: alg none', mode: 'Strict', raw: unsigned(), ok: false },
    { name: 'Strict: no token', mode: 'Strict', ok: false },
    { name: 'Optional: no token passes', mode: 'Optional', ok: true },
    { name: 'Optional: bad token is rejected', mode: 'Optional', raw: 'not-a-jwt', ok: false },
    { name: 'Optional: good token', mode: 'Optional', token: good, ok: true },
    { name: 'Permissive: bad token passes without identity', mode: 'Permissive', raw: 'not-a-jwt', ok: true },
    { name: 'Permissive: good token sets the identity', mode: 'Permissive', token: good, ok: true },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const token = c.token ? await c.token() : c.raw;
      const ctx = testContext({ headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
      const result = await step(c.mode).onRequest(ctx);
      const verified = c.ok && token !== undefined && c.raw === undefined;
      if (c.ok) assert.equal(result.action, 'continue');
      else {
        assert.ok(result.action === 'respond');
        assert.equal(result.response.status, 401);
        const challenge = String(result.response.headers?.['www-authenticate']);
        if (token === undefined) assert.equal(challenge, 'Bearer');
        else assert.match(challenge, /^Bearer error="invalid_token", error_description="/);
        if (c.reason) assert.match(challenge, c.reason);
      }
      assert.equal(ctx.identity.jwt?.token, verified ? token : undefined);
      assert.equal(ctx.identity.passthroughToken, verified ? token : undefined);
    });
  }

  it('exposes verified claims and answers a repeated token synchronously from the cache', async () => {
    const s = step('Strict');
    const token = await good();
    assert.equal((await s.onRequest(testContext({ headers: { authorization: `Bearer ${token}` } }))).action, 'continue');
    const ctx = testContext({ headers: { authorization: `Bearer ${token}` } });
    const again = s.onRequest(ctx);
    assert.ok(!(again instanceof Promise));
    assert.equal(again.action, 'continue');
    assert.equal(ctx.identity.jwt?.claims.sub, 'alice');
    assert.equal(ctx.cel().jwt?.sub, 'alice');
  });

  it('reads the token from a configured location', async () => {
    const s = step('Strict', { location: { cookie: { name: 'id_token' } } });
    const ctx = testContext({ headers: { cookie: `id_token=${await good()}` } });
    assert.equal((await s.onRequest(ctx)).action, 'continue');
  });

  it('fails to compile a malformed inline JWKS and a backendRef without a resolver', () => {
    assert.throws(() => step('Strict', { providers: [{ issuer: ISSUER, jwks: { inline: '{"keys": 1}' } }] }), /jwks.inline/);
    assert.throws(() => step('Strict', { providers: [{ issuer: ISSUER, jwks: { inline: 'nope' } }] }), /not JSON/);
    assert.throws(() => step('Strict', { providers: [{ issuer: ISSUER, jwks: { remote: { backendKey: 'b', cacheDurationMs: 1000 } } }] }), /cannot be resolved/);
  });
});

function unsigned(): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none' })}.${part({ iss: ISSUER, aud: 'api' })}.`;
}
