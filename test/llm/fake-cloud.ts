/**
 * Cloud credentials for the LLM e2e tests: cloud-A keys (a Secret, and a SigV4 check against
 * them) and a cloud-C service account whose JWT grant a local token endpoint answers.
 */
import { generateKeyPairSync } from 'node:crypto';
import { importSPKI, jwtVerify } from 'jose';
import { verifySigV4, type SigV4Verdict } from './fake-sts.ts';
import { startMockProvider, type MockProvider, type RecordedRequest } from './mock-provider.ts';

export const AWS_KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' } as const;

/** A Secret holding AWS_KEYS in the shape `auth.cloudA.secretRef` reads. */
export function awsKeysSecret(name = 'aws'): string {
  return `apiVersion: v1
kind: Secret
metadata: { name: ${name} }
stringData: { accessKey: ${AWS_KEYS.accessKeyId}, secretKey: ${AWS_KEYS.secretAccessKey} }
`;
}

/** Whether a request to the mock is SigV4-signed with AWS_KEYS for `service` in `region`. */
export function signedWithTestKeys(req: RecordedRequest, service: string, region: string): SigV4Verdict {
  return verifySigV4(req, { service, region }, (id) => (id === AWS_KEYS.accessKeyId ? AWS_KEYS.secretAccessKey : undefined));
}

export interface FakeServiceAccount {
  /** The token endpoint: answers every JWT grant with `accessToken`; its requests are recorded. */
  readonly tokens: MockProvider;
  /** A Secret with the account's `credentials.json`, as `auth.cloudC.secretRef` reads it. */
  secret(name?: string): string;
  /** Checks a JWT grant against the account's public key, issuer and token endpoint. */
  verifyGrant(assertion: string): Promise<unknown>;
}

export async function startFakeServiceAccount(accessToken: string): Promise<FakeServiceAccount> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tokens = await startMockProvider();
  const tokenUri = `http://${tokens.host}:${tokens.port}/token`;
  tokens.answer('/token', { status: 200, body: { access_token: accessToken, expires_in: 3600, token_type: 'Bearer' } });
  const issuer = 'gw@proj-1.iam.gserviceaccount.com';
  const verifyKey = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'RS256');
  const account = JSON.stringify({ type: 'service_account', client_email: issuer, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), token_uri: tokenUri });
  return {
    tokens,
    secret: (name = 'gcp') => `apiVersion: v1
kind: Secret
metadata: { name: ${name} }
stringData:
  credentials.json: '${account.replace(/\n/g, '\\n')}'
`,
    verifyGrant: (assertion) => jwtVerify(assertion, verifyKey, { issuer, audience: tokenUri }),
  };
}
