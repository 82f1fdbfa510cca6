import { createHash, timingSafeEqual } from 'node:crypto';
import apacheCrypt from 'apache-crypt';
import apacheMd5 from 'apache-md5';
import bcrypt from 'bcryptjs';

/** The password-file hash formats SPEC.md allows (what Debian's `htpasswd -B | -m | -s | -d` writes). */
export type HashFormat = 'bcrypt' | 'apr1' | 'sha1' | 'crypt';

export interface PasswordEntry {
  readonly user: string;
  readonly format: HashFormat;
  readonly hash: string;
}

const BCRYPT = /^\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}$/;
const APR1 = /^\$apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}$/;
const SHA1 = /^\{SHA\}[A-Za-z0-9+/]{27}=$/;
const CRYPT = /^[./A-Za-z0-9]{13}$/;

/**
 * Parses password-file lines `<user>:<hash>` at config time. A hash in no known format throws
 * (the member is invalid and fails closed): SPEC.md forbids raw passwords, and a line we cannot
 * verify must not silently lock its user out or, worse, be compared as plain text.
 */
export function parsePasswordFile(lines: readonly string[]): Map<string, PasswordEntry> {
  const users = new Map<string, PasswordEntry>();
  lines.forEach((line, i) => {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`password-file line ${i + 1} is not <user>:<hash>`);
    const user = line.slice(0, colon);
    const hash = line.slice(colon + 1).trim();
    const format = formatOf(hash);
    if (format === undefined) throw new Error(`password-file line ${i + 1}: the hash is not bcrypt, $apr1$ MD5, {SHA} or crypt`);
    // (The message names the line, not the user: the file comes from a Secret and is never quoted.)
    // Apache uses the first line of a user; later duplicates are ignored the same way.
    if (!users.has(user)) users.set(user, { user, format, hash });
  });
  return users;
}

function formatOf(hash: string): HashFormat | undefined {
  if (BCRYPT.test(hash)) return 'bcrypt';
  if (APR1.test(hash)) return 'apr1';
  if (SHA1.test(hash)) return 'sha1';
  if (CRYPT.test(hash)) return 'crypt';
  return undefined;
}

/**
 * Whether `password` matches the entry. bcrypt runs asynchronously (bcryptjs yields to the event
 * loop between rounds, cost 10 ≈ 80 ms) so other requests keep flowing; the fast formats compare
 * in constant time.
 */
export function verifyPassword(entry: PasswordEntry, password: string): boolean | Promise<boolean> {
  switch (entry.format) {
    case 'bcrypt':
      return bcrypt.compare(password, entry.hash);
    case 'apr1':
      return sameText(apacheMd5(password, entry.hash), entry.hash);
    case 'sha1':
      return sameText(`{SHA}${createHash('sha1').update(password, 'utf8').digest('base64')}`, entry.hash);
    case 'crypt':
      // DES crypt reads only the first 8 characters, as Apache does.
      return sameText(apacheCrypt(password, entry.hash), entry.hash);
  }
}

function sameText(computed: string, stored: string): boolean {
  const a = Buffer.from(computed, 'utf8');
  const b = Buffer.from(stored, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
