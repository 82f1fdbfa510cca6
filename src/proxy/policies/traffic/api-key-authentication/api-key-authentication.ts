import { hash, timingSafeEqual } from 'node:crypto';
import type { ApiKeyEntry } from '../../../../ir/policy.ts';
import { challengeScheme, compileCredentialExtractor } from '../../credentials/location.ts';
import { unauthorized } from '../../credentials/unauthorized.ts';
import { CONTINUE } from '../../result.ts';
import type { StepCompiler } from '../../step.ts';

interface KnownKey {
  readonly name: string;
  readonly digest: Buffer;
  /** What a request presenting this key gets as `identity.apiKey` (shared: identities are read-only). */
  readonly identity: { readonly name: string; readonly metadata?: unknown };
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
  const credentialHeader = member.location.header?.name.toLowerCase();
  // One-shot hash: a Hash object per request costs several microseconds and GC work.
  const lookup = (presented: string): KnownKey | undefined => {
    const hex = hash('sha256', presented, 'hex');
    const known = keys.get(hex);
    return known !== undefined && timingSafeEqual(known.digest, Buffer.from(hex, 'hex')) ? known : undefined;
  };
  /**
   * The key this connection last presented and this step verified. Keep-alive clients send the
   * same key on every request; comparing it in constant time costs far less than hashing. Only a
   * key verified on the same connection can match, so timing tells a client nothing it did not
   * send itself; a config swap compiles a new step and so starts a new cache.
   */
  const lastVerified = new WeakMap<object, { presented: Buffer; known: KnownKey }>();
  const sameAsLast = (connection: object | undefined, presented: string): KnownKey | undefined => {
    const last = connection === undefined ? undefined : lastVerified.get(connection);
    if (last === undefined) return undefined;
    const bytes = Buffer.from(presented, 'utf8');
    return bytes.length === last.presented.length && timingSafeEqual(bytes, last.presented) ? last.known : undefined;
  };
  return {
    member: 'apiKeyAuthentication',
    onRequest(ctx) {
      const presented = extract(ctx);
      if (presented === undefined) return mode === 'Strict' ? unauthorized('an API key is required', scheme) : CONTINUE;
      let known = sameAsLast(ctx.connection, presented);
      if (known === undefined) {
        known = lookup(presented);
        if (known === undefined) return mode === 'Permissive' ? CONTINUE : unauthorized('the API key is not valid', scheme);
        if (ctx.connection) lastVerified.set(ctx.connection, { presented: Buffer.from(presented, 'utf8'), known });
      }
      ctx.identity.apiKey = known.identity;
      // A backend `auth.passthrough` re-sends the validated key; upstreams with their own credential never see it.
      ctx.identity.passthroughToken = presented;
      if (credentialHeader !== undefined) ctx.identity.credentialHeaders = [...(ctx.identity.credentialHeaders ?? []), credentialHeader];
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
    const name = entryName(entry.id);
    keys.set(hex, { name, digest: Buffer.from(hex, 'hex'), identity: entry.metadata === undefined ? { name } : { name, metadata: entry.metadata } });
  }
  return keys;
}

/** SPEC.md: `apiKey.name` is the data entry's name; the IR id is `<object>/<entry>`. */
function entryName(id: string): string {
  return id.slice(id.indexOf('/') + 1);
}
