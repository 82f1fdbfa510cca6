/**
 * Azure OpenAI (providerB) with an Entra ID token through a listening gateway: the gateway runs
 * the client-credentials grant against a local fake Entra endpoint (AZURE_AUTHORITY_HOST, as
 * Azure's SDKs honour it), the bearer reaches the mock Azure deployment in place of an api-key,
 * the token is cached across requests and replaced once it expires.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, type MockProvider } from './mock-provider.ts';

/** Entra's lifetime for the fake tokens: short enough to see one expire, long enough for two quick requests. */
const LIFETIME_S = 3;

describe('LLM gateway: Azure OpenAI with an Entra client-credentials token', () => {
  let entra: MockProvider;
  let azure: MockProvider;
  let gw: GatewayHarness;
  const previousAuthority = process.env.AZURE_AUTHORITY_HOST;
  let issued = 0;

  before(async () => {
    [entra, azure] = await Promise.all([startMockProvider(), startMockProvider()]);
    entra.answer('/tenant-1/oauth2/v2.0/token', () => ({ status: 200, body: { token_type: 'Bearer', expires_in: LIFETIME_S, ext_expires_in: LIFETIME_S, access_token: `entra-token-${++issued}` } }));
    azure.answer('/openai/deployments/', (req) => (req.headers.authorization === `Bearer entra-token-${issued}`
      ? responseFixture('openai-tool-calls')
      : { status: 401, body: { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } } }));
    // The gateway runs in this process: its credentials read the environment at request time.
    process.env.AZURE_AUTHORITY_HOST = `http://${entra.host}:${entra.port}`;
    gw = await startGateway(llmGatewayYaml([{ name: 'azure', prefix: '/azure' }], `
apiVersion: v1
kind: Secret
metadata: { name: entra }
stringData: { clientID: app-1, tenantID: tenant-1, clientSecret: s3cret }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: azure }
spec:
  ai:
    provider: { providerB: { endpoint: "https://acme.openai.azure.com/", deploymentName: gpt4o-prod, apiVersion: "2024-10-21" }, host: ${azure.host}, port: ${azure.port} }
  policies:
    auth: { cloudB: { secretRef: { name: entra } } }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    if (previousAuthority === undefined) delete process.env.AZURE_AUTHORITY_HOST;
    else process.env.AZURE_AUTHORITY_HOST = previousAuthority;
    await gw?.close();
    await Promise.all([entra, azure].map((m) => m?.stop()));
  });

  const chat = () => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, '/azure/v1'), maxRetries: 0 })
    .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Paris?' }] });

  it('the grant carries the Secret and the cognitive services scope; the bearer reaches the deployment; cached for the next request', async () => {
    const first = await chat();
    const second = await chat();
    assert.equal(first.choices[0].message.tool_calls?.[0]?.type, 'function');
    assert.equal(second.choices.length, 1);

    assert.equal(entra.requests.length, 1, 'one token for two requests');
    const grant = entra.requests[0];
    assert.deepEqual([grant.method, grant.path, grant.headers['content-type']], ['POST', '/tenant-1/oauth2/v2.0/token', 'application/x-www-form-urlencoded']);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(grant.body.toString())), {
      grant_type: 'client_credentials', client_id: 'app-1', client_secret: 's3cret', scope: 'https://cognitiveservices.azure.com/.default',
    });
    for (const up of azure.requests) {
      assert.equal(up.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
      assert.equal(up.headers.authorization, 'Bearer entra-token-1');
      assert.equal(up.headers['api-key'], undefined);
    }
  });

  it('an expired token is not used: the next request gets a fresh one', async () => {
    await sleep(LIFETIME_S * 1000 + 200);
    const res = await chat();
    assert.equal(res.choices.length, 1);
    assert.ok(entra.requests.length >= 2, 'a second grant');
    const last = azure.requests.at(-1)!;
    assert.notEqual(last.headers.authorization, 'Bearer entra-token-1');
    assert.equal(last.headers.authorization, `Bearer entra-token-${issued}`);
  });
});
