import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../../common/logger.ts';
import type { BasicAuthenticationPolicy } from '../../../../ir/policy.ts';
import { testContext } from '../../../testing/credential-context.ts';
import { htpasswdLines } from '../../../../../test/support/htpasswd.ts';
import { compileBasicAuthentication } from './basic-authentication.ts';

// Written once by Debian's htpasswd: -s (SHA) for alice, -B (bcrypt, cost 5) for bob, both 'open:sesame'.
const USERS = htpasswdLines('alice-bob.htpasswd');

function step(mode: BasicAuthenticationPolicy['mode'], realm = 'Restricted') {
  const member: BasicAuthenticationPolicy = { mode, realm, location: { header: { name: 'Authorization', prefix: 'Basic ' } }, users: USERS };
  return compileBasicAuthentication(member, { logger: silentLogger, policy: { sources: {}, basicAuthentication: member } });
}

const basic = (userPass: string): IncomingHttpHeaders => ({ authorization: `Basic ${Buffer.from(userPass).toString('base64')}` });

const cases: { name: string; mode: BasicAuthenticationPolicy['mode']; headers?: IncomingHttpHeaders; user?: string }[] = [
  { name: 'Strict: SHA user with a colon in the password', mode: 'Strict', headers: basic('alice:open:sesame'), user: 'alice' },
  { name: 'Strict: bcrypt user', mode: 'Strict', headers: basic('bob:open:sesame'), user: 'bob' },
  { name: 'Strict: wrong password', mode: 'Strict', headers: basic('alice:nope') },
  { name: 'Strict: unknown user', mode: 'Strict', headers: basic('carol:open:sesame') },
  { name: 'Strict: not base64', mode: 'Strict', headers: { authorization: 'Basic ###' } },
  { name: 'Strict: no colon', mode: 'Strict', headers: basic('alice') },
  { name: 'Strict: no credential', mode: 'Strict' },
  { name: 'Strict: a Bearer token is no basic credential', mode: 'Strict', headers: { authorization: 'Bearer x' } },
  { name: 'Optional: no credential passes', mode: 'Optional', user: undefined },
  { name: 'Optional: wrong password is rejected', mode: 'Optional', headers: basic('bob:nope') },
  { name: 'Optional: valid credential', mode: 'Optional', headers: basic('bob:open:sesame'), user: 'bob' },
];

describe('basicAuthentication', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const ctx = testContext({ headers: c.headers });
      const result = await step(c.mode).onRequest(ctx);
      const passes = c.user !== undefined || (c.mode === 'Optional' && c.headers === undefined);
      if (passes) assert.equal(result.action, 'continue');
      else {
        assert.ok(result.action === 'respond');
        assert.equal(result.response.status, 401);
        assert.equal(result.response.headers?.['www-authenticate'], 'Basic realm="Restricted", charset="UTF-8"');
      }
      assert.deepEqual(ctx.identity.basicAuth, c.user === undefined ? undefined : { user: c.user });
    });
  }

  it('quotes the realm in the challenge', async () => {
    const result = await step('Strict', 'Team "A"').onRequest(testContext());
    assert.ok(result.action === 'respond');
    assert.equal(result.response.headers?.['www-authenticate'], 'Basic realm="Team \\"A\\"", charset="UTF-8"');
  });

  it('answers a repeated bcrypt credential from its cache without awaiting', async () => {
    const s = step('Strict');
    const first = s.onRequest(testContext({ headers: basic('bob:open:sesame') }));
    assert.ok(first instanceof Promise, 'the first bcrypt check is asynchronous');
    assert.equal((await first).action, 'continue');
    const ctx = testContext({ headers: basic('bob:open:sesame') });
    const second = s.onRequest(ctx);
    assert.ok(!(second instanceof Promise), 'a verified credential is answered synchronously');
    assert.equal(second.action, 'continue');
    assert.deepEqual(ctx.identity.basicAuth, { user: 'bob' });
    const wrong = s.onRequest(testContext({ headers: basic('bob:other') }));
    assert.ok(wrong instanceof Promise, 'another password is verified again');
    assert.equal((await wrong).action, 'respond');
  });

  it('checks an unknown user against a real entry, so timing does not reveal which users exist', async () => {
    const member: BasicAuthenticationPolicy = { mode: 'Strict', realm: 'Restricted', location: { header: { name: 'Authorization', prefix: 'Basic ' } }, users: [USERS[1]] };
    const s = compileBasicAuthentication(member, { logger: silentLogger, policy: { sources: {}, basicAuthentication: member } });
    const unknown = s.onRequest(testContext({ headers: basic('mallory:open:sesame') }));
    assert.ok(unknown instanceof Promise, 'the unknown user waits for a bcrypt check like a known user would');
    const result = await unknown;
    assert.ok(result.action === 'respond');
    assert.equal(result.response.status, 401);
  });

  it('fails to compile with a raw password line', () => {
    const member: BasicAuthenticationPolicy = { mode: 'Strict', realm: 'r', location: { header: { name: 'Authorization', prefix: 'Basic ' } }, users: ['eve:plaintext'] };
    assert.throws(() => compileBasicAuthentication(member, { logger: silentLogger, policy: { sources: {} } }), /the hash is not/);
  });
});
