import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePasswordFile, verifyPassword, type HashFormat } from './htpasswd.ts';

// Written by Debian's htpasswd (apache2-utils): `htpasswd -nb -B|-m|-s|-d alice 'open:sesame'`.
const DEBIAN: Record<HashFormat, string> = {
  bcrypt: 'alice:$2y$05$La/hgE14VLjVdymAUnrzyOha4MlW4S7fSXI7s0ZcAe22yQHbyA0Oa',
  apr1: 'alice:$apr1$tGpFGJL2$4PQbWADoBTdMPkv5mxmqq.',
  sha1: 'alice:{SHA}k5A+xr53n4Lxr/w+OtkhllTIZrk=',
  crypt: 'alice:eUiwx0ICxgmXA',
};

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
    { name: 'a raw password', line: 'alice:open-sesame', error: /line 1 \(user alice\): the hash is not/ },
    { name: 'no colon', line: 'alice', error: /not <user>:<hash>/ },
    { name: 'empty user', line: ':{SHA}k5A+xr53n4Lxr/w+OtkhllTIZrk=', error: /not <user>:<hash>/ },
    { name: 'SHA-512 crypt, which SPEC.md does not list', line: 'alice:$6$salt$' + 'a'.repeat(86), error: /the hash is not/ },
  ];
  for (const c of bad) it(`rejects ${c.name}`, () => assert.throws(() => parsePasswordFile([c.line]), c.error));
});
