import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import aws4 from 'aws4';
import type { BackendAuthPolicy } from '../../../../ir/policy.ts';
import type { RequestIdentity } from '../../../policies/context.ts';
import type { CredentialHint } from '../../translate/providers/types.ts';
import { CredentialError, LlmCredentials, type SignableRequest } from './index.ts';
import { awsCredentials } from '../../../policies/credentials/sigv4.ts';

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
    await assert.rejects(async () => new LlmCredentials({ env: {} }).apply(request(BEDROCK), undefined, {}), CredentialError);
  });

  for (const mechanism of ['oauthTokenExchange', 'crossAppAccess', 'jwtSign'] as const) {
    it(`${mechanism} configured so it cannot work is a CredentialError, never forwarded without a credential`, async () => {
      await assert.rejects(async () => new LlmCredentials({ env: {} }).apply(request(BEARER), { [mechanism]: {} }, {}), /backend auth cannot be applied/);
    });
  }

  it('cloudA on a header provider without a region: CredentialError', async () => {
    await assert.rejects(async () => new LlmCredentials({ env: {} }).apply(request(BEARER), { cloudA: { secret: AWS, serviceName: 's' } }, {}), CredentialError);
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
    { name: 'cloudB Secret without clientSecret', auth: { cloudB: { secret: { tenantID: 't', clientID: 'c' } } } },
    { name: 'cloudB workload identity without AZURE_FEDERATED_TOKEN_FILE/AZURE_CLIENT_ID/AZURE_TENANT_ID', auth: { cloudB: { workloadIdentity: {} } }, env: { AZURE_CLIENT_ID: 'c' } },
    { name: 'cloudB managed identity with no IMDS reachable', auth: { cloudB: { managedIdentity: { clientId: 'x' } as never /* malformed on purpose: one id of three, as a hand-written IR may carry */ } }, env: { AZURE_POD_IDENTITY_AUTHORITY_HOST: 'http://127.0.0.1:1' } },
    { name: 'cloudC with a Secret that is not a service account', auth: { cloudC: { secret: '{"type":"authorized_user"}' } } },
    { name: 'cloudC with no key and no metadata server', auth: { cloudC: {} }, env: { GCE_METADATA_HOST: '127.0.0.1:1' } },
  ];
  for (const c of failures) {
    it(`CredentialError: ${c.name}`, async () => {
      await assert.rejects(async () => new LlmCredentials({ env: c.env ?? {} }).apply(request(BEARER), c.auth, {}), CredentialError);
    });
  }

  it('CredentialError when the token endpoint fails', async () => {
    const creds = new LlmCredentials({ env: { AZURE_AUTHORITY_HOST: 'http://127.0.0.1:1' } });
    await assert.rejects(async () => creds.apply(request(AZURE_KEY), { cloudB }, {}), CredentialError);
  });
});

/**
 * Managed identity, workload identity and Google metadata/ID tokens against one local fake that
 * answers in each vendor's wire shape: Entra's token endpoint, Azure IMDS, the App Service
 * identity endpoint, the GCE metadata server and Google's OAuth token endpoint.
 */
describe('LlmCredentials: ambient cloud identities', () => {
  interface Seen { method: string; path: string; query: URLSearchParams; headers: Record<string, string | string[] | undefined>; form: URLSearchParams }
  const seen: Seen[] = [];
  let base = '';
  let server: ReturnType<typeof createServer>;
  let dir = '';
  const idJwt = (aud: string, expS: number) => `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ aud, exp: expS })).toString('base64url')}.sig`;
  const exp = Math.floor(Date.now() / 1000) + 1800;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-cred-'));
    writeFileSync(join(dir, 'federated'), 'projected-k8s-token\n');
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        seen.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, form: new URLSearchParams(Buffer.concat(chunks).toString()) });
        const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
        if (url.pathname === '/tenant-1/oauth2/v2.0/token') return json({ token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: 'entra-wi' });
        if (url.pathname === '/metadata/identity/oauth2/token') {
          if (req.headers.metadata !== 'true') return res.writeHead(400).end('{"error":"invalid_request","error_description":"Required metadata header not specified"}');
          return json({ access_token: 'imds-token', refresh_token: '', expires_in: '86399', expires_on: String(exp), not_before: '0', resource: url.searchParams.get('resource'), token_type: 'Bearer' });
        }
        if (url.pathname === '/msi/token') return json({ access_token: 'appservice-token', expires_on: String(exp), resource: url.searchParams.get('resource'), token_type: 'Bearer', client_id: 'x' });
        if (url.pathname === '/computeMetadata/v1/instance/service-accounts/default/token') return json({ access_token: 'ya29.metadata', expires_in: 3599, token_type: 'Bearer' });
        if (url.pathname === '/computeMetadata/v1/instance/service-accounts/default/identity') return res.writeHead(200, { 'content-type': 'text/html' }).end(idJwt(url.searchParams.get('audience') ?? '', exp));
        if (url.pathname === '/google/token') return json({ id_token: idJwt('from-sa', exp) });
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const account = () => JSON.stringify({ type: 'service_account', client_email: 'gw@p.iam.gserviceaccount.com', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), token_uri: `http://${base}/google/token` });

  const cases: { name: string; auth: () => BackendAuthPolicy; env: () => Record<string, string>; bearer: () => string; check: (s: Seen) => void }[] = [
    {
      name: 'cloudB workloadIdentity: the federated token file as client_assertion at Entra',
      auth: () => ({ cloudB: { workloadIdentity: {} } }),
      env: () => ({ AZURE_AUTHORITY_HOST: `http://${base}`, AZURE_TENANT_ID: 'tenant-1', AZURE_CLIENT_ID: 'app-1', AZURE_FEDERATED_TOKEN_FILE: join(dir, 'federated') }),
      bearer: () => 'entra-wi',
      check: (s) => {
        assert.deepEqual([s.method, s.path], ['POST', '/tenant-1/oauth2/v2.0/token']);
        assert.deepEqual(Object.fromEntries(s.form), {
          grant_type: 'client_credentials', client_id: 'app-1', scope: 'https://cognitiveservices.azure.com/.default',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: 'projected-k8s-token',
        });
      },
    },
    {
      name: 'cloudB with nothing chosen and a projected token in the environment: workload identity',
      auth: () => ({ cloudB: {} }),
      env: () => ({ AZURE_AUTHORITY_HOST: `http://${base}`, AZURE_TENANT_ID: 'tenant-1', AZURE_CLIENT_ID: 'app-2', AZURE_FEDERATED_TOKEN_FILE: join(dir, 'federated') }),
      bearer: () => 'entra-wi',
      check: (s) => assert.equal(s.form.get('client_id'), 'app-2'),
    },
    {
      name: 'cloudB managedIdentity on a VM/AKS: IMDS with Metadata: true, resource and client_id',
      auth: () => ({ cloudB: { managedIdentity: { clientId: 'mi-client', objectId: 'mi-object', resourceId: '/subscriptions/s/rg/r' } } }),
      env: () => ({ AZURE_POD_IDENTITY_AUTHORITY_HOST: `http://${base}` }),
      bearer: () => 'imds-token',
      check: (s) => {
        assert.deepEqual([s.method, s.path, s.headers.metadata], ['GET', '/metadata/identity/oauth2/token', 'true']);
        assert.deepEqual(Object.fromEntries(s.query), { 'api-version': '2018-02-01', resource: 'https://cognitiveservices.azure.com', client_id: 'mi-client' });
      },
    },
    {
      name: 'cloudB managedIdentity on App Service: IDENTITY_ENDPOINT with X-IDENTITY-HEADER',
      auth: () => ({ cloudB: { managedIdentity: { objectId: 'mi-object' } as never /* malformed on purpose: one id of three, as a hand-written IR may carry */ } }),
      env: () => ({ IDENTITY_ENDPOINT: `http://${base}/msi/token`, IDENTITY_HEADER: 'secret-header' }),
      bearer: () => 'appservice-token',
      check: (s) => {
        assert.deepEqual([s.method, s.path, s.headers['x-identity-header']], ['GET', '/msi/token', 'secret-header']);
        assert.deepEqual(Object.fromEntries(s.query), { 'api-version': '2019-08-01', resource: 'https://cognitiveservices.azure.com', principal_id: 'mi-object' });
      },
    },
    {
      name: 'cloudC AccessToken without a key: the metadata server token',
      auth: () => ({ cloudC: {} }),
      env: () => ({ GCE_METADATA_HOST: base }),
      bearer: () => 'ya29.metadata',
      check: (s) => assert.deepEqual([s.method, s.path, s.headers['metadata-flavor']], ['GET', '/computeMetadata/v1/instance/service-accounts/default/token', 'Google']),
    },
    {
      name: 'cloudC IdToken without a key: metadata identity endpoint, audience from the backend host',
      auth: () => ({ cloudC: { type: 'IdToken' } }),
      env: () => ({ GCE_METADATA_HOST: base }),
      bearer: () => idJwt('https://upstream.test', exp),
      check: (s) => {
        assert.deepEqual([s.path, s.headers['metadata-flavor']], ['/computeMetadata/v1/instance/service-accounts/default/identity', 'Google']);
        assert.deepEqual(Object.fromEntries(s.query), { audience: 'https://upstream.test', format: 'full' });
      },
    },
    {
      name: 'cloudC IdToken with an explicit audience',
      auth: () => ({ cloudC: { type: 'IdToken', audience: 'https://svc-abc.a.run.app' } }),
      env: () => ({ GCE_METADATA_HOST: base }),
      bearer: () => idJwt('https://svc-abc.a.run.app', exp),
      check: (s) => assert.equal(s.query.get('audience'), 'https://svc-abc.a.run.app'),
    },
    {
      name: 'cloudC IdToken with a service account: JWT with target_audience exchanged for an id_token',
      auth: () => ({ cloudC: { type: 'IdToken', audience: 'https://run.example', secret: account() } }),
      env: () => ({}),
      bearer: () => idJwt('from-sa', exp),
      check: (s) => {
        assert.deepEqual([s.method, s.path, s.form.get('grant_type')], ['POST', '/google/token', 'urn:ietf:params:oauth:grant-type:jwt-bearer']);
        const claims = JSON.parse(Buffer.from((s.form.get('assertion') ?? '').split('.')[1], 'base64url').toString()) as Record<string, unknown>;
        assert.deepEqual([claims.target_audience, claims.iss, claims.sub, claims.aud], ['https://run.example', 'gw@p.iam.gserviceaccount.com', 'gw@p.iam.gserviceaccount.com', `http://${base}/google/token`]);
      },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const creds = new LlmCredentials({ env: c.env() });
      const before = seen.length;
      const out = await creds.apply(request(AZURE_KEY), c.auth(), {});
      const again = await creds.apply(request(AZURE_KEY), c.auth(), {});
      assert.equal(out.headers.authorization, `Bearer ${c.bearer()}`);
      assert.equal(out.headers['api-key'], undefined, 'the bearer replaces the key header');
      assert.deepEqual(again.headers, out.headers);
      assert.equal(seen.length, before + 1, 'one fetch, then the cached token');
      c.check(seen.at(-1)!);
    });
  }
});
