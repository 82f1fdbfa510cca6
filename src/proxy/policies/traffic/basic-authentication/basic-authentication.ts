import { hash } from 'node:crypto';
import { compileCredentialExtractor } from '../../credentials/location.ts';
import { ExpiringLru } from '../../credentials/expiring-lru.ts';
import { quoted, unauthorized } from '../../credentials/unauthorized.ts';
import type { PolicyContext } from '../../context.ts';
import { CONTINUE, type PolicyResult } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';
import { parsePasswordFile, verifyPassword, type PasswordEntry } from './htpasswd.ts';

/** Successful verifications kept per policy: bcrypt costs ~80 ms, a hit costs a sha256. */
const VERIFIED_CACHE_ENTRIES = 1024;
/** A password changes only with the config (which recompiles the step), so entries may live long. */
const VERIFIED_CACHE_TTL_MS = 60 * 60_000;

/**
 * traffic.basicAuthentication: `user:password` (base64, RFC 7617) checked against password-file
 * lines. Failures answer 401 with `WWW-Authenticate: Basic realm="<realm>"` (SPEC.md Errors).
 */
export const compileBasicAuthentication: StepCompiler<'basicAuthentication'> = (member) => {
  const extract = compileCredentialExtractor(member.location, 'basicAuthentication.location');
  const users = parsePasswordFile(member.users);
  const challenge = `Basic realm=${quoted(member.realm)}, charset="UTF-8"`;
  const verified = new ExpiringLru<true>(VERIFIED_CACHE_ENTRIES);
  const optional = member.mode === 'Optional';
  // An unknown user is checked against a real entry too, so a reply's timing does not tell an
  // attacker which user names exist; the answer is a rejection whatever the check says.
  const decoy: PasswordEntry | undefined = users.values().next().value;

  const accept = (ctx: PolicyContext, user: string): PolicyResult => {
    ctx.identity.basicAuth = { user };
    return CONTINUE;
  };
  const reject = (): PolicyResult => unauthorized('the user name or password is not valid', challenge);

  return {
    member: 'basicAuthentication',
    onRequest(ctx) {
      const presented = extract(ctx);
      if (presented === undefined) return optional ? CONTINUE : unauthorized('basic authentication is required', challenge);
      const credentials = decodeBasic(presented);
      if (credentials === undefined) return reject();
      const entry: PasswordEntry | undefined = users.get(credentials.user);
      if (entry === undefined) {
        if (decoy === undefined) return reject();
        const wasted = verifyPassword(decoy, credentials.password);
        return typeof wasted === 'boolean' ? reject() : wasted.then(reject, reject);
      }
      const cacheKey = `${credentials.user}\u0000${hash('sha256', credentials.password, 'base64')}`;
      if (verified.get(cacheKey)) return accept(ctx, credentials.user);
      const check = (ok: boolean): PolicyResult => {
        if (!ok) return reject();
        verified.set(cacheKey, true, Date.now() + VERIFIED_CACHE_TTL_MS);
        return accept(ctx, credentials.user);
      };
      const ok = verifyPassword(entry, credentials.password);
      return typeof ok === 'boolean' ? check(ok) : ok.then(check);
    },
  };
};

/** `base64(user:password)`; the password may contain ':' (RFC 7617 §2), the user may not. */
function decodeBasic(value: string): { user: string; password: string } | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return undefined;
  const text = Buffer.from(value, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}
