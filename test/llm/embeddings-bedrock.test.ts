/**
 * OpenAI embeddings on Bedrock through a listening gateway, with the official `openai` SDK as
 * the client (its default asks for base64 and decodes it) and a mock of Bedrock InvokeModel that
 * verifies the SigV4 signature from first principles and answers in each family's documented
 * shape: Titan text v2 (one `inputText`), Cohere Embed (`texts[]`, token count in the
 * `x-amzn-bedrock-input-token-count` header). Anthropic keeps answering 501.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { awsKeysSecret, signedWithTestKeys } from './fake-cloud.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { startMockProvider, type Answer, type MockProvider } from './mock-provider.ts';

/** Exactly representable in float32, so base64 round trips compare equal. */
const VEC = { hello: [0.5, -0.25, 0.125, 1], world: [-1, 0.75, 0, 0.0625] } as const;

describe('LLM embeddings on Bedrock through the gateway (openai SDK)', () => {
  let bedrock: MockProvider;
  let anthropic: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    [bedrock, anthropic] = await Promise.all([startMockProvider(), startMockProvider()]);
    bedrock.answer('/model/', (req): Answer => {
      const verdict = signedWithTestKeys(req, 'bedrock', 'us-west-2');
      if (!verdict.ok) return { status: 403, headers: { 'x-amzn-errortype': 'InvalidSignatureException' }, body: { message: verdict.reason } };
      const body = req.json();
      if (req.path === '/model/amazon.titan-embed-text-v2%3A0/invoke') {
        if (body.dimensions !== undefined && ![256, 512, 1024].includes(body.dimensions as number)) {
          return { status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message: `Malformed input request: #/dimensions: ${String(body.dimensions)} is not a valid enum value, please reformat your input and try again.` } };
        }
        const v = VEC[body.inputText as keyof typeof VEC];
        return { status: 200, headers: { 'x-amzn-bedrock-input-token-count': '2' }, body: { embedding: v, inputTextTokenCount: 2, embeddingsByType: { float: v } } };
      }
      if (req.path === '/model/cohere.embed-english-v3/invoke') {
        const texts = body.texts as (keyof typeof VEC)[];
        return { status: 200, headers: { 'x-amzn-bedrock-input-token-count': '5' }, body: { id: 'e-1', embeddings: texts.map((t) => VEC[t]), response_type: 'embeddings_floats', texts } };
      }
      return { status: 404, body: { message: 'no such model' } };
    });
    gw = await startGateway(llmGatewayYaml([
      { name: 'bedrock', prefix: '/bedrock' },
      { name: 'anthropic', prefix: '/anthropic' },
    ], `
${awsKeysSecret()}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: bedrock }
spec:
  ai:
    provider: { providerG: { region: us-west-2 }, host: ${bedrock.host}, port: ${bedrock.port} }
  policies:
    auth: { cloudA: { secretRef: { name: aws } } }
    ai: { routes: ${ROUTES}, modelAliases: { titan: "amazon.titan-embed-text-v2:0" } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: anthropic }
spec:
  ai:
    provider: { providerD: {}, host: ${anthropic.host}, port: ${anthropic.port} }
  policies:
    auth: { key: sk-ant }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([bedrock, anthropic].map((m) => m?.stop()));
  });

  const client = (prefix: string) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });

  it('Titan v2 with the SDK default (base64 on the wire, decoded by the SDK), signed InvokeModel, usage', async () => {
    const before = bedrock.requests.length;
    const res = await client('/bedrock').embeddings.create({ model: 'titan', input: 'hello', dimensions: 256 });
    assert.equal(bedrock.requests.length, before + 1);
    const up = bedrock.requests.at(-1)!;
    assert.deepEqual([up.method, up.path], ['POST', '/model/amazon.titan-embed-text-v2%3A0/invoke']);
    assert.deepEqual(up.json(), { inputText: 'hello', dimensions: 256 });
    assert.deepEqual(res.data.map((d) => [d.index, Array.from(d.embedding)]), [[0, VEC.hello]]);
    assert.equal(res.model, 'amazon.titan-embed-text-v2:0');
    assert.deepEqual(res.usage, { prompt_tokens: 2, total_tokens: 2 });
  });

  it('Cohere Embed: a batch in one call, floats as asked, tokens from the response header', async () => {
    const res = await client('/bedrock').embeddings.create({ model: 'cohere.embed-english-v3', input: ['hello', 'world'], encoding_format: 'float' });
    assert.deepEqual(bedrock.requests.at(-1)!.json(), { texts: ['hello', 'world'], input_type: 'search_document' });
    assert.deepEqual(res.data.map((d) => [d.index, d.embedding]), [[0, VEC.hello], [1, VEC.world]]);
    assert.deepEqual(res.usage, { prompt_tokens: 5, total_tokens: 5 });
  });

  it('Cohere Embed: input_type sent as an extra body field reaches Bedrock', async () => {
    await client('/bedrock').embeddings.create({ model: 'cohere.embed-english-v3', input: 'hello', encoding_format: 'float', input_type: 'search_query' } as OpenAI.EmbeddingCreateParams);
    assert.deepEqual(bedrock.requests.at(-1)!.json(), { texts: ['hello'], input_type: 'search_query' });
  });

  it('Titan with several inputs: 400 naming `input`, nothing sent to Bedrock', async () => {
    const before = bedrock.requests.length;
    await assert.rejects(client('/bedrock').embeddings.create({ model: 'titan', input: ['hello', 'world'] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.param, 'input');
      assert.match(e.message, /one text per request/);
      return true;
    });
    assert.equal(bedrock.requests.length, before);
  });

  it('a Bedrock ValidationException reaches the SDK as a 400 APIError with Bedrock\'s message', async () => {
    await assert.rejects(client('/bedrock').embeddings.create({ model: 'titan', input: 'hello', dimensions: 300 }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.equal(e.code, 'ValidationException');
      assert.match(e.message, /#\/dimensions: 300 is not a valid enum value/);
      return true;
    });
  });

  it('Anthropic has no embeddings API: 501, nothing sent upstream', async () => {
    await assert.rejects(client('/anthropic').embeddings.create({ model: 'claude-sonnet-4-5', input: 'hello' }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.APIError);
      assert.equal(e.status, 501);
      return true;
    });
    assert.equal(anthropic.requests.length, 0);
  });
});
