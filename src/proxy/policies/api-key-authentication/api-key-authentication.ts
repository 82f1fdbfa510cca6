import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyEntry } from '../../../ir/policy.ts';
import { challengeScheme, compileCredentialExtractor } from '../credentials/location.ts';
import { unauthorized } from '../credentials/unauthorized.ts';
import { CONTINUE } from '../result.ts';
import type { StepCompiler } from '../step.ts';

interface KnownKey {
  readonly name: string;
  readonly digest: Buffer;
  readonly metadata: unknown;
}

/**
 * traffic.apiKeyAuthentication. The IR carries sha256 digests only; the presented key is hashed
 * and looked up by its digest. Looking up by digest is constant-time enough: a Map lookup's timing
 * can only depend on the digest of what the attacker sent, and steering a sha256 digest toward a
 * stored one is a preimage search, so timing reveals nothing about any valid key. The final
 * comparison still uses timingSafeEqual over the two equal-length digests.
 */
export const compileApiKeyAuthentication: StepCompiler<'apiKeyAuthentication'> = (member, deps) => {
  const extract = compileCredentialExtractor(member.location, 'apiKeyAuthentication.location');
  const scheme = challengeScheme(member.location);
  const keys = indexKeys(member.keys, (message) => deps.logger.warn({ policy: deps.policy.sources.apiKeyAuthentication }, message));
  const mode = member.mode;
  return {
    member: 'apiKeyAuthentication',
    onRequest(ctx) {
      const presented = extract(ctx);
      if (presented === undefined) return mode === 'Strict' ? unauthorized('an API key is required', scheme) : CONTINUE;
      // One-shot hash: a Hash object per request costs several microseconds and GC work.
      const hex = hash('sha256', presented, 'hex');
      const known = keys.get(hex);
      if (known === undefined || !timingSafeEqual(known.digest, Buffer.from(hex, 'hex'))) {
        return mode === 'Permissive' ? CONTINUE : unauthorized('the API key is not valid', scheme);
      }
      ctx.identity.apiKey = known.metadata === undefined ? { name: known.name } : { name: known.name, metadata: known.metadata };
      return CONTINUE;
    },
  };
};

/** Digest (lowercase hex) → key. The first entry wins when two entries hold the same key. */
function indexKeys(entries: readonly ApiKeyEntry[], warn: (message: string) => void): Map<string, KnownKey> {
  const keys = new Map<string, KnownKey>();
  for (const entry of entries) {
    const hex = entry.keyHash.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`apiKeyAuthentication: key ${entry.id} has no sha256 hex digest`);
    const existing = keys.get(hex);
    if (existing) {
      warn(`apiKeyAuthentication: key ${entry.id} repeats key ${existing.name}; ${existing.name} is used`);
      continue;
    }
    keys.set(hex, { name: entryName(entry.id), digest: Buffer.from(hex, 'hex'), metadata: entry.metadata });
  }
  return keys;
}

/** SPEC.md: `apiKey.name` is the data entry's name; the IR id is `<object>/<entry>`. */
function entryName(id: string): string {
  return id.slice(id.indexOf('/') + 1);
}
