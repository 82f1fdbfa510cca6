/**
 * Cloud providers through a listening gateway built from YAML: Bedrock (cloud-A) with its binary
 * event stream, the mock recomputing the SigV4 signature from the same credentials; Vertex
 * (cloud-C) with an access token the gateway obtains from a local fake token endpoint with a
 * signed service-account JWT; Gemini native with its API key header.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { awsKeysSecret, signedWithTestKeys, startFakeServiceAccount, type FakeServiceAccount } from './fake-cloud.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { startMockProvider, streamFixture, type MockProvider } from './mock-provider.ts';


/** Recomputes the request's SigV4 signature over the headers it says it signed. */
describe('LLM gateway with cloud providers', () => {
  let bedrock: MockProvider;
  let vertex: MockProvider;
  let gemini: MockProvider;
  let account: FakeServiceAccount;
  let gw: GatewayHarness;

  before(async () => {
    [bedrock, vertex, gemini, account] = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider(), startFakeServiceAccount('ya29.from-fake-endpoint')]);
    bedrock.answer('/model/', (req) => (signedWithTestKeys(req, 'bedrock', 'us-west-2').ok ? streamFixture('bedrock-reasoning-tool') : { status: 403, body: { message: 'The request signature we calculated does not match the signature you provided.' } }));
    vertex.answer('/v1/projects/', (req) => (req.headers.authorization === 'Bearer ya29.from-fake-endpoint' ? streamFixture('gemini-thought-tools') : { status: 401, body: { error: { code: 401, message: 'bad token', status: 'UNAUTHENTICATED' } } }));
    gemini.answer('/v1beta/models/', streamFixture('gemini-thought-tools'));
    gw = await startGateway(llmGatewayYaml([
      { name: 'bedrock', prefix: '/bedrock' },
      { name: 'vertex', prefix: '/vertex' },
      { name: 'gemini', prefix: '/gemini' },
    ], `
${awsKeysSecret()}---
${account.secret()}---
apiVersion: v1
kind: Secret
metadata: { name: gemini }
stringData: { Authorization: gm-key }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: bedrock }
spec:
  ai:
    provider: { providerG: { region: us-west-2, model: "anthropic.claude-3-5-sonnet-20241022-v2:0" }, host: ${bedrock.host}, port: ${bedrock.port} }
  policies:
    auth: { cloudA: { secretRef: { name: aws } } }
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: vertex }
spec:
  ai:
    provider: { providerF: { projectId: proj-1, region: us-central1, model: gemini-2.5-flash }, host: ${vertex.host}, port: ${vertex.port} }
  policies:
    auth: { cloudC: { secretRef: { name: gcp } } }
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: gemini }
spec:
  ai:
    provider: { providerE: { model: gemini-2.5-flash }, host: ${gemini.host}, port: ${gemini.port} }
  policies:
    auth: { secretRef: { name: gemini } }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([bedrock, vertex, gemini, account?.tokens].map((m) => m?.stop()));
  });

  const client = (prefix: string) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });
  const ask = { messages: [{ role: 'user' as const, content: 'Weather?' }], stream: true as const, stream_options: { include_usage: true } };

  async function collect(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>): Promise<{ text: string; tools: string[]; usage?: OpenAI.CompletionUsage }> {
    let text = '';
    const tools: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) if (call.function?.name) tools.push(call.function.name);
      if (chunk.usage) usage = chunk.usage;
    }
    return { text, tools, usage };
  }

  it('Bedrock: converse-stream signed with SigV4, event stream translated to chat chunks', async () => {
    const seen = await collect(await client('/bedrock').chat.completions.create({ model: 'ignored', ...ask }));
    const up = bedrock.requests.at(-1)!;
    assert.equal(up.path, '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse-stream');
    assert.ok(signedWithTestKeys(up, 'bedrock', 'us-west-2').ok, 'the signature verifies against the test keys');
    assert.deepEqual(seen.tools, ['get_weather']);
    assert.equal(seen.usage?.total_tokens, 853, 'input includes the 800 cached tokens');
  });

  it('Bedrock: a request signed with other credentials is refused by the mock (the check can fail)', () => {
    const up = bedrock.requests.at(-1)!;
    const tampered = { ...up, body: Buffer.concat([up.body, Buffer.from(' ')]) };
    assert.equal(signedWithTestKeys(tampered, 'bedrock', 'us-west-2').ok, false);
  });

  it('Vertex: access token from the service-account JWT grant, cached across requests', async () => {
    const first = await collect(await client('/vertex').chat.completions.create({ model: 'ignored', ...ask }));
    await collect(await client('/vertex').chat.completions.create({ model: 'ignored', ...ask }));
    assert.equal(vertex.requests.at(-1)!.path, '/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    assert.equal(account.tokens.requests.length, 1, 'one token fetch for two requests');
    const grant = new URLSearchParams(account.tokens.requests[0].body.toString());
    assert.equal(grant.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    await account.verifyGrant(grant.get('assertion') ?? '');
    assert.deepEqual(first.tools, ['get.weather']);
    assert.equal(first.text, 'Let me look that up.');
  });

  it('Gemini native: x-goog-api-key and streamGenerateContent', async () => {
    const seen = await collect(await client('/gemini').chat.completions.create({ model: 'ignored', ...ask }));
    const up = gemini.requests.at(-1)!;
    assert.equal(up.headers['x-goog-api-key'], 'gm-key');
    assert.equal(up.headers.authorization, undefined);
    assert.match(up.path, /^\/v1beta\/models\/gemini-2\.5-flash:streamGenerateContent\?alt=sse/);
    assert.equal(seen.usage?.total_tokens, 245);
  });
});
