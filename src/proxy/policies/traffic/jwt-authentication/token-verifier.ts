import { decodeJwt, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { KeyLookup } from './jwks-source.ts';

export interface ProviderVerifier {
  readonly issuer: string;
  readonly audiences: readonly string[] | undefined;
  readonly keys: KeyLookup;
}

export type Verification =
  | { readonly ok: true; readonly claims: JWTPayload }
  | { readonly ok: false; readonly reason: string };

/** Envoy's jwt_authn default clock skew: tokens a minute early or late still pass. */
const CLOCK_TOLERANCE_S = 60;

/**
 * Verifies a compact JWT against the providers whose `issuer` equals its `iss` (SPEC.md: a
 * provider is chosen by issuer). The unverified payload is read only to pick providers; every
 * claim used afterwards comes from jose's verified result. Asymmetric algorithms only: a JWKS
 * of public keys cannot verify HMAC, and `none` is never accepted.
 */
export async function verifyToken(token: string, providers: readonly ProviderVerifier[]): Promise<Verification> {
  let issuer: unknown;
  try {
    issuer = decodeJwt(token).iss;
  } catch {
    return { ok: false, reason: 'the token is not a JWT' };
  }
  const candidates = providers.filter((p) => p.issuer === issuer);
  if (candidates.length === 0) return { ok: false, reason: 'the token issuer is not accepted' };
  let reason = 'the token is not valid';
  for (const provider of candidates) {
    const options: JWTVerifyOptions = {
      issuer: provider.issuer,
      ...(provider.audiences ? { audience: [...provider.audiences] } : {}),
      clockTolerance: CLOCK_TOLERANCE_S,
      algorithms: ALGORITHMS,
    };
    try {
      return { ok: true, claims: await verifyWithCandidates(token, provider.keys, options) };
    } catch (err) {
      reason = describe(err);
    }
  }
  return { ok: false, reason };
}

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * jose reports a token without `kid` that several keys could verify as JWKSMultipleMatchingKeys
 * carrying the candidate keys; trying each is the caller's job.
 */
async function verifyWithCandidates(token: string, keys: KeyLookup, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, keys, options)).payload;
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
    let last: unknown = err;
    for await (const key of err) {
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }
}

/** A short reason for logs and the RFC 6750 error_description; never echoes token contents. */
function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the token's ${err.claim} claim is not accepted`;
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key of the issuer matches the token';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token signature is not valid';
  return 'the token is not valid';
}
