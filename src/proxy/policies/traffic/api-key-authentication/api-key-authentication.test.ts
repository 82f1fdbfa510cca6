import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../../common/logger.ts';
import type { ApiKeyAuthenticationPolicy, AuthMode } from '../../../../ir/policy.ts';
import { testContext } from '../../../testing/credential-context.ts';
import type { PolicyResult } from '../../result.ts';
import { compileApiKeyAuthentication } from './api-key-authentication.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function step(mode: AuthMode, location: ApiKeyAuthenticationPolicy['location'] = { header: { name: 'Authorization', prefix: 'Bearer ' } }) {
  const member: ApiKeyAuthenticationPolicy = {
    mode,
    location,
    keys: [
      { id: 'keys/alice', keyHash: sha256('sk-alice') },
      { id: 'keys/bob', keyHash: sha256('sk-bob').toUpperCase(), metadata: { group: 'eng' } },
    ],
  };
  return compileApiKeyAuthentication(member, { logger: silentLogger, policy: { sources: {}, apiKeyAuthentication: member } });
}

const bearer = (key: string): IncomingHttpHeaders => ({ authorization: `Bearer ${key}` });

const cases: { name: string; mode: AuthMode; headers?: IncomingHttpHeaders; status?: number; identity?: unknown }[] = [
  { name: 'Strict: valid key', mode: 'Strict', headers: bearer('sk-alice'), identity: { name: 'alice' } },
  { name: 'Strict: valid key with metadata (uppercase hash in the IR)', mode: 'Strict', headers: bearer('sk-bob'), identity: { name: 'bob', metadata: { group: 'eng' } } },
  { name: 'Strict: wrong key', mode: 'Strict', headers: bearer('sk-mallory'), status: 401 },
  { name: 'Strict: no key', mode: 'Strict', status: 401 },
  { name: 'Optional: no key passes', mode: 'Optional' },
  { name: 'Optional: wrong key is rejected', mode: 'Optional', headers: bearer('sk-mallory'), status: 401 },
  { name: 'Optional: valid key', mode: 'Optional', headers: bearer('sk-alice'), identity: { name: 'alice' } },
  { name: 'Permissive: wrong key passes without identity', mode: 'Permissive', headers: bearer('sk-mallory') },
  { name: 'Permissive: no key passes', mode: 'Permissive' },
  { name: 'Permissive: valid key sets the identity', mode: 'Permissive', headers: bearer('sk-bob'), identity: { name: 'bob', metadata: { group: 'eng' } } },
];

describe('apiKeyAuthentication', () => {
  for (const c of cases) {
    it(c.name, () => {
      const ctx = testContext({ headers: c.headers });
      const result = step(c.mode).onRequest(ctx) as PolicyResult;
      if (c.status === undefined) assert.equal(result.action, 'continue');
      else {
        assert.equal(result.action === 'respond' && result.response.status, c.status);
        assert.equal(result.action === 'respond' && result.response.headers?.['www-authenticate'], 'Bearer');
      }
      assert.deepEqual(ctx.identity.apiKey, c.identity);
    });
  }

  it('reads a key from a custom header and names no challenge scheme', () => {
    const s = step('Strict', { header: { name: 'x-api-key' } });
    assert.equal((s.onRequest(testContext({ headers: { 'x-api-key': 'sk-alice' } })) as PolicyResult).action, 'continue');
    const denied = s.onRequest(testContext({ headers: { authorization: 'Bearer sk-alice' } })) as PolicyResult;
    assert.ok(denied.action === 'respond');
    assert.equal(denied.response.status, 401);
    assert.equal(denied.response.headers?.['www-authenticate'], undefined);
  });

  describe('keys verified earlier on the same connection', () => {
    const on = (connection: object, key: string) => Object.assign(testContext({ headers: bearer(key) }), { connection });
    const run = (s: ReturnType<typeof step>, ctx: ReturnType<typeof on>) => {
      const result = s.onRequest(ctx) as PolicyResult;
      return result.action === 'respond' ? result.response.status : ctx.identity.apiKey;
    };
    const rows = [
      { name: 'the same key again: the same identity', keys: ['sk-alice', 'sk-alice'], want: [{ name: 'alice' }, { name: 'alice' }] },
      { name: 'another valid key on the connection replaces the remembered one', keys: ['sk-alice', 'sk-bob', 'sk-alice'], want: [{ name: 'alice' }, { name: 'bob', metadata: { group: 'eng' } }, { name: 'alice' }] },
      { name: 'a wrong key after a valid one is still refused', keys: ['sk-alice', 'sk-alicf', 'sk-alice-longer', ''], want: [{ name: 'alice' }, 401, 401, 401] },
    ];
    for (const row of rows) {
      it(row.name, () => {
        const s = step('Strict');
        const connection = {};
        assert.deepEqual(row.keys.map((k) => run(s, on(connection, k))), row.want);
      });
    }

    it('a key remembered on one connection is not trusted on another, nor by a recompiled step', () => {
      const s = step('Strict');
      const first = {};
      assert.deepEqual(run(s, on(first, 'sk-alice')), { name: 'alice' });
      assert.equal(run(s, on({}, 'sk-mallory')), 401);
      // A config swap compiles a new step whose keys may differ: it verifies from scratch.
      const revoked = compileApiKeyAuthentication({ mode: 'Strict', location: { header: { name: 'Authorization', prefix: 'Bearer ' } }, keys: [{ id: 'keys/bob', keyHash: sha256('sk-bob') }] }, { logger: silentLogger, policy: { sources: {} } });
      assert.equal(run(revoked, on(first, 'sk-alice')), 401);
    });
  });

  it('rejects an IR key without a sha256 digest at compile time', () => {
    const member: ApiKeyAuthenticationPolicy = { mode: 'Strict', location: { header: { name: 'x' } }, keys: [{ id: 'k/a', keyHash: 'nothex' }] };
    assert.throws(() => compileApiKeyAuthentication(member, { logger: silentLogger, policy: { sources: {} } }), /sha256/);
  });
});
