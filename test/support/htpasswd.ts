/** Password files written once by Debian's htpasswd and committed (test/fixtures/htpasswd/README.md says how). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'htpasswd');

/** The `<user>:<hash>` lines of a fixture, e.g. `gateway-users.htpasswd` or `alice-open-sesame/bcrypt.htpasswd`. */
export function htpasswdLines(name: string): string[] {
  return readFileSync(join(FIXTURES, name), 'utf8').split('\n').filter((line) => line !== '');
}

/** The one line of a single-user fixture. */
export function htpasswdLine(name: string): string {
  const lines = htpasswdLines(name);
  if (lines.length !== 1) throw new Error(`${name} has ${lines.length} lines, not one`);
  return lines[0];
}
