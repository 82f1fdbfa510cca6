import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A signing key for tests and its public JWK (with kid and alg), as an identity provider publishes it. */
export interface TestSigner {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256';
  readonly publicJwk: JWK;
  sign(claims: JWTPayload, options?: { expiresIn?: string | number; kid?: string | null }): Promise<string>;
}

export async function testSigner(alg: 'RS256' | 'ES256', kid: string): Promise<TestSigner> {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'RS256' ? { modulusLength: 2048 } : {});
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, publicJwk, sign: (claims, options) => sign(privateKey, alg, kid, claims, options) };
}

function sign(key: CryptoKey, alg: string, kid: string, claims: JWTPayload, options: { expiresIn?: string | number; kid?: string | null } = {}): Promise<string> {
  const header = options.kid === null ? { alg } : { alg, kid: options.kid ?? kid };
  const jwt = new SignJWT(claims).setProtectedHeader(header).setIssuedAt();
  if (options.expiresIn !== undefined) jwt.setExpirationTime(options.expiresIn);
  return jwt.sign(key);
}

export const jwks = (...signers: TestSigner[]): string => JSON.stringify({ keys: signers.map((s) => s.publicJwk) });
