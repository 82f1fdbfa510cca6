import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import aws4 from 'aws4';
import type { BackendAuthPolicy } from '../../../../ir/policy.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import type { CredentialHint } from '../../providers/types.ts';
import { CredentialError, LlmCredentials, type SignableRequest } from './index.ts';
import { awsCredentials } from './sigv4.ts';

const BEARER: CredentialHint = { kind: 'header', name: 'authorization', prefix: 'Bearer ' };
const X_API_KEY: CredentialHint = { kind: 'header', name: 'x-api-key' };
const AZURE_KEY: CredentialHint = { kind: 'header', name: 'api-key' };
const BEDROCK: CredentialHint = { kind: 'sigv4', service: 'bedrock', region: 'us-west-2' };
const AWS = { accessKey: 'AKIDEXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

function request(credential: CredentialHint, headers: Record<string, string> = { 'content-type': 'application/json' }): SignableRequest {
  return { host: 'upstream.test', method: 'POST', path: '/v1/x', headers, body: Buffer.from('{"model":"m"}'), credential };
}

/** Re-signs what the request says it signed, with the given keys, and compares (as the cloud-A service would). */
function sigV4Valid(headers: Record<string, string>, path: string, service: string, region: string, keys: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): boolean {
  const signed = /SignedHeaders=([^,]+)/.exec(headers.authorization ?? '')?.[1].split(';') ?? [];
  if (signed.length === 0) return false;
  const again = { host: 'upstream.test', method: 'POST', path, service, region, headers: Object.fromEntries(signed.map((h) => [h, headers[h]])), body: Buffer.from('{"model":"m"}') };
  aws4.sign(again, keys);
  return (again.headers as Record<string, string>).Authorization === headers.authorization;
}

describe('LlmCredentials: where keys go', () => {
  const cases: { name: string; hint: CredentialHint; auth?: BackendAuthPolicy; identity?: RequestIdentity; expect: { headers: Record<string, string>; path?: string } }[] = [
    { name: 'no auth policy: nothing is added', hint: BEARER, expect: { headers: { 'content-type': 'application/json' } } },
    { name: 'providerA: Authorization Bearer', hint: BEARER, auth: { key: 'sk' }, expect: { headers: { 'content-type': 'application/json', authorization: 'Bearer sk' } } },
    { name: 'providerD: x-api-key without prefix', hint: X_API_KEY, auth: { key: 'sk-ant' }, expect: { headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant' } } },
    { name: 'providerB/C: api-key', hint: AZURE_KEY, auth: { key: 'az' }, expect: { headers: { 'content-type': 'application/json', 'api-key': 'az' } } },
    {
      name: 'a location in the policy beats the provider default',
      hint: X_API_KEY, auth: { key: 'k', location: { header: { name: 'X-Proxy-Key', prefix: 'Key ' } } },
      expect: { headers: { 'content-type': 'application/json', 'x-proxy-key': 'Key k' } },
    },
    { name: 'a query parameter location', hint: BEARER, auth: { key: 'k', location: { queryParameter: { name: 'key' } } }, expect: { headers: { 'content-type': 'application/json' }, path: '/v1/x?key=k' } },
    { name: 'the key replaces what was there', hint: X_API_KEY, auth: { key: 'gateway' }, expect: { headers: { 'x-api-key': 'gateway' } } },
    {
      name: 'passthrough re-sends the validated client token where the provider wants it',
      hint: X_API_KEY, auth: { passthrough: {} }, identity: { passthroughToken: 'client-token' },
      expect: { headers: { 'content-type': 'application/json', 'x-api-key': 'client-token' } },
    },
    { name: 'passthrough without a validated token writes nothing', hint: BEARER, auth: { passthrough: {} }, expect: { headers: { 'content-type': 'application/json' } } },
    {
      name: 'extra credentials go beside the primary one',
      hint: BEARER, auth: { key: 'k', credentials: [{ location: { header: { name: 'OpenAI-Organization' } }, value: 'org-1' }] },
      expect: { headers: { 'content-type': 'application/json', authorization: 'Bearer k', 'openai-organization': 'org-1' } },
    },
    { name: 'providerG with a key: a Bedrock API key as bearer, no signing', hint: BEDROCK, auth: { key: 'bedrock-api-key' }, expect: { headers: { 'content-type': 'application/json', authorization: 'Bearer bedrock-api-key' } } },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const headers = c.name.startsWith('the key replaces') ? { 'x-api-key': 'client' } : undefined;
      const out = await new LlmCredentials({ env: {} }).apply(request(c.hint, headers), c.auth, c.identity ?? {});
      assert.deepEqual(out, { headers: c.expect.headers, path: c.expect.path ?? '/v1/x' });
    });
  }
});

describe('LlmCredentials: SigV4', () => {
  const envKeys = { AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'env-secret', AWS_SESSION_TOKEN: 'env-session' };

  it('providerG signs with the Secret keys for its service and region', async () => {
    const out = await new LlmCredentials({ env: {} }).apply(request(BEDROCK), { cloudA: { secret: AWS } }, {});
    assert.match(out.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request/);
    assert.ok(out.headers['x-amz-date']);
    assert.equal(out.headers['x-amz-security-token'], undefined);
    assert.ok(sigV4Valid(out.headers, out.path, 'bedrock', 'us-west-2', { accessKeyId: AWS.accessKey, secretAccessKey: AWS.secretKey }));
  });

  it('a session token in the Secret is sent and signed', async () => {
    const out = await new LlmCredentials({ env: {} }).apply(request(BEDROCK), { cloudA: { secret: { ...AWS, sessionToken: 'sess' } } }, {});
    assert.equal(out.headers['x-amz-security-token'], 'sess');
    assert.ok(sigV4Valid(out.headers, out.path, 'bedrock', 'us-west-2', { accessKeyId: AWS.accessKey, secretAccessKey: AWS.secretKey, sessionToken: 'sess' }));
  });

  it('without an auth policy providerG signs with the environment credentials', async () => {
    const out = await new LlmCredentials({ env: envKeys }).apply(request(BEDROCK), undefined, {});
    assert.match(out.headers.authorization, /Credential=AKIDENV\//);
    assert.equal(out.headers['x-amz-security-token'], 'env-session');
  });

  it('serviceName and region in cloudA beat the provider defaults', async () => {
    const out = await new LlmCredentials({ env: {} }).apply(request(BEDROCK), { cloudA: { secret: AWS, serviceName: 'execute-api', region: 'eu-west-1' } }, {});
    assert.match(out.headers.authorization, /\/eu-west-1\/execute-api\/aws4_request/);
  });

  it('cloudA on a header provider signs too (service and region from cloudA)', async () => {
    const out = await new LlmCredentials({ env: {} }).apply(request(BEARER), { cloudA: { secret: AWS, serviceName: 'sagemaker', region: 'us-east-2' } }, {});
    assert.match(out.headers.authorization, /^AWS4-HMAC-SHA256 .*\/us-east-2\/sagemaker\/aws4_request/);
  });

  it('no credentials anywhere: CredentialError', async () => {
    await assert.rejects(new LlmCredentials({ env: {} }).apply(request(BEDROCK), undefined, {}), CredentialError);
  });

  for (const mechanism of ['oauthTokenExchange', 'crossAppAccess', 'jwtSign'] as const) {
    it(`${mechanism} is refused with a CredentialError, never forwarded without a credential`, async () => {
      await assert.rejects(new LlmCredentials({ env: {} }).apply(request(BEARER), { [mechanism]: {} }, {}), /not supported for LLM providers/);
    });
  }

  it('cloudA on a header provider without a region: CredentialError', async () => {
    await assert.rejects(new LlmCredentials({ env: {} }).apply(request(BEARER), { cloudA: { secret: AWS, serviceName: 's' } }, {}), CredentialError);
  });

  const sources: { name: string; secret?: Record<string, string>; env: Record<string, string>; expect?: { accessKeyId: string; sessionToken?: string } }[] = [
    { name: 'a full Secret wins over the environment', secret: { ...AWS, sessionToken: 's' }, env: envKeys, expect: { accessKeyId: 'AKIDEXAMPLE', sessionToken: 's' } },
    { name: 'a Secret key pair does not pick up the environment session token', secret: AWS, env: envKeys, expect: { accessKeyId: 'AKIDEXAMPLE' } },
    { name: 'environment only, with its session token', env: envKeys, expect: { accessKeyId: 'AKIDENV', sessionToken: 'env-session' } },
    { name: 'a Secret without a key pair falls back to the environment, session token included', secret: { unrelated: 'x' }, env: envKeys, expect: { accessKeyId: 'AKIDENV', sessionToken: 'env-session' } },
    { name: 'half a key pair in the Secret is not mixed with the environment', secret: { accessKey: 'AKIDHALF' }, env: envKeys, expect: { accessKeyId: 'AKIDENV', sessionToken: 'env-session' } },
    { name: 'nothing: undefined', env: {} },
  ];
  for (const c of sources) {
    it(`awsCredentials: ${c.name}`, () => {
      const got = awsCredentials(c.secret, c.env);
      assert.deepEqual(got && { accessKeyId: got.accessKeyId, ...(got.sessionToken ? { sessionToken: got.sessionToken } : {}) }, c.expect);
    });
  }
});

describe('LlmCredentials: cloud-B and cloud-C tokens', () => {
  let tokenServer: ReturnType<typeof createServer>;
  let authority = '';
  const grants: URLSearchParams[] = [];

  before(async () => {
    tokenServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        grants.push(new URLSearchParams(Buffer.concat(chunks).toString()));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `entra-${grants.length}`, expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    authority = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}`;
  });
  after(async () => {
    tokenServer.closeAllConnections();
    await new Promise<void>((resolve) => tokenServer.close(() => resolve()));
  });

  const cloudB = { secret: { tenantID: 't1', clientID: 'c1', clientSecret: 's1' } };

  it('cloudB: an Entra bearer token replaces the api-key header, fetched once and cached', async () => {
    const creds = new LlmCredentials({ env: { AZURE_AUTHORITY_HOST: authority } });
    const first = await creds.apply(request(AZURE_KEY), { cloudB }, {});
    const second = await creds.apply(request(AZURE_KEY), { cloudB }, {});
    assert.deepEqual(first.headers, { 'content-type': 'application/json', authorization: 'Bearer entra-1' });
    assert.deepEqual(second.headers, first.headers);
    assert.equal(grants.length, 1);
    assert.equal(grants[0].get('grant_type'), 'client_credentials');
    assert.equal(grants[0].get('client_id'), 'c1');
    assert.equal(grants[0].get('scope'), 'https://cognitiveservices.azure.com/.default');
  });

  const failures: { name: string; auth: BackendAuthPolicy; env?: Record<string, string> }[] = [
    { name: 'cloudB without a Secret (managed identity is not supported)', auth: { cloudB: { managedIdentity: { clientId: 'x' } } } },
    { name: 'cloudC IdToken', auth: { cloudC: { type: 'IdToken' } } },
    { name: 'cloudC without a Secret or GOOGLE_APPLICATION_CREDENTIALS', auth: { cloudC: {} } },
    { name: 'cloudC with a Secret that is not a service account', auth: { cloudC: { secret: '{"type":"authorized_user"}' } } },
  ];
  for (const c of failures) {
    it(`CredentialError: ${c.name}`, async () => {
      await assert.rejects(new LlmCredentials({ env: c.env ?? {} }).apply(request(BEARER), c.auth, {}), CredentialError);
    });
  }

  it('CredentialError when the token endpoint fails', async () => {
    const creds = new LlmCredentials({ env: { AZURE_AUTHORITY_HOST: 'http://127.0.0.1:1' } });
    await assert.rejects(creds.apply(request(AZURE_KEY), { cloudB }, {}), CredentialError);
  });
});
