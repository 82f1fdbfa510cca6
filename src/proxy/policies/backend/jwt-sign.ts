import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import type { CredentialLocation, JwtSignAuth } from '../../../ir/policy.ts';
import { DEFAULT_CREDENTIAL_LOCATION } from './auth.ts';

const ALGORITHMS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384']);
const RESERVED_CLAIMS = ['iat', 'exp', 'nbf'];
/** SPEC.md jwtSign.ttl default. */
const DEFAULT_TTL_MS = 300_000;

/** Signs one short-lived JWT per request (backend auth `jwtSign`). */
export interface JwtSigner {
  /** Where the token goes (`location`, default Authorization: Bearer). */
  readonly location: CredentialLocation;
  sign(now?: number): Promise<string>;
}

/**
 * Compiles `jwtSign` at config time: the key is parsed once (PKCS#8, PKCS#1 or SEC1 PEM) and
 * checked against `alg`; a bad key, algorithm or reserved claim throws (the policy fails closed).
 */
export function compileJwtSigner(spec: JwtSignAuth): JwtSigner {
  const pem = spec.signingKey;
  // An empty key is what a hand-written IR or a Secret entry without data gives: refuse, do not sign with nothing.
  if (!pem) throw new Error('jwtSign needs signingKeyRef (a PEM RSA or EC private key)');
  const alg = spec.alg ?? 'RS256';
  if (!ALGORITHMS.has(alg)) throw new Error(`jwtSign: unsupported alg ${alg}`);
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    throw new Error(`jwtSign: the signing key does not parse: ${(err as Error).message}`, { cause: err });
  }
  const wantsEc = alg.startsWith('ES');
  if ((key.asymmetricKeyType === 'ec') !== wantsEc) throw new Error(`jwtSign: a ${key.asymmetricKeyType ?? 'unknown'} key cannot sign ${alg}`);
  const claims: JWTPayload = { ...spec.claims };
  const reserved = RESERVED_CLAIMS.filter((c) => c in claims);
  if (reserved.length > 0) throw new Error(`jwtSign: claims may not set ${reserved.join(', ')}`);
  const ttlMs = spec.ttlMs ?? DEFAULT_TTL_MS;
  const kid = spec.kid;
  return {
    location: spec.location ?? DEFAULT_CREDENTIAL_LOCATION,
    sign(now = Date.now()) {
      const iat = Math.floor(now / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg, typ: 'JWT', ...(kid ? { kid } : {}) })
        .setIssuedAt(iat)
        .setExpirationTime(iat + Math.ceil(ttlMs / 1000))
        .sign(key);
    },
  };
}
