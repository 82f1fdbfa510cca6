import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { htpasswdLine } from '../../../../../test/support/htpasswd.ts';
import { parsePasswordFile, verifyPassword, type HashFormat } from './htpasswd.ts';

// Written once by Debian's htpasswd (apache2-utils) for alice / 'open:sesame': test/fixtures/htpasswd/README.md.
const FORMATS: readonly HashFormat[] = ['bcrypt', 'apr1', 'sha1', 'crypt'];
const DEBIAN = Object.fromEntries(FORMATS.map((f) => [f, htpasswdLine(`alice-open-sesame/${f}.htpasswd`)])) as Record<HashFormat, string>;

describe('htpasswd', () => {
  for (const [format, line] of Object.entries(DEBIAN) as [HashFormat, string][]) {
    it(`${format}: detects the format and verifies the right password only`, async () => {
      const entry = parsePasswordFile([line]).get('alice');
      assert.equal(entry?.format, format);
      assert.equal(await verifyPassword(entry, 'open:sesame'), true);
      assert.equal(await verifyPassword(entry, 'open:sEsame'), false);
      assert.equal(await verifyPassword(entry, ''), false);
    });
  }

  it('crypt, like Apache, reads only the first 8 characters of a password', () => {
    const entry = parsePasswordFile([DEBIAN.crypt]).get('alice')!;
    assert.equal(verifyPassword(entry, 'open:sesXXXX'), true);
  });

  it('keeps the first line of a repeated user', async () => {
    const users = parsePasswordFile([DEBIAN.sha1, DEBIAN.apr1]);
    assert.equal(users.get('alice')?.format, 'sha1');
  });

  const bad: { name: string; line: string; error: RegExp }[] = [
    { name: 'a raw password', line: 'alice:open-sesame', error: /^Error: password-file line 1: the hash is not/ },
    { name: 'no colon', line: 'alice', error: /not <user>:<hash>/ },
    { name: 'empty user', line: ':{SHA}k5A+xr53n4Lxr/w+OtkhllTIZrk=', error: /not <user>:<hash>/ },
    { name: 'SHA-512 crypt, which SPEC.md does not list', line: 'alice:$6$salt$' + 'a'.repeat(86), error: /the hash is not/ },
  ];
  for (const c of bad) it(`rejects ${c.name}`, () => assert.throws(() => parsePasswordFile([c.line]), c.error));
});
