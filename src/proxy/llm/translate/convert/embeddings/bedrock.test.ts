/**
 * OpenAI embeddings on Bedrock through the facade: the InvokeModel request per model family
 * (Titan text v1/v2, Cohere Embed v3/v4, inference-profile ids) and the documented answers
 * (Titan `{embedding, inputTextTokenCount, embeddingsByType}`, Cohere `embeddings_floats` and
 * `embeddings_by_type`) → the OpenAI list with usage, float or base64.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LLMProvider } from '../../config.ts';
import { planRequest, type ForwardPlan } from '../../plan.ts';
import { bedrockEmbeddingFamily, float32Base64 } from './bedrock.ts';

const BEDROCK: LLMProvider = { providerG: { region: 'us-west-2' } };
const json = (b: Uint8Array) => JSON.parse(Buffer.from(b).toString('utf8')) as Record<string, unknown>;

function plan(body: unknown, provider: LLMProvider = BEDROCK): ReturnType<typeof planRequest> {
  return planRequest({ routeType: 'Embeddings', provider, body: Buffer.from(JSON.stringify(body)) });
}

function forward(p: ReturnType<typeof planRequest>): ForwardPlan {
  assert.equal(p.kind, 'forward');
  return p;
}

describe('bedrockEmbeddingFamily', () => {
  const cases: { name: string; model: string; family: string | undefined }[] = [
    { name: 'Titan text v2', model: 'amazon.titan-embed-text-v2:0', family: 'titan' },
    { name: 'Titan text v1', model: 'amazon.titan-embed-text-v1', family: 'titan' },
    { name: 'Titan G1 text', model: 'amazon.titan-embed-g1-text-02', family: 'titan' },
    { name: 'Cohere English v3', model: 'cohere.embed-english-v3', family: 'cohere' },
    { name: 'Cohere v4 through a US inference profile', model: 'us.cohere.embed-v4:0', family: 'cohere' },
    { name: 'foundation-model ARN', model: 'arn:aws:bedrock:us-west-2::foundation-model/cohere.embed-multilingual-v3', family: 'cohere' },
    { name: 'Titan multimodal (images: no text translation)', model: 'amazon.titan-embed-image-v1', family: undefined },
    { name: 'a chat model', model: 'anthropic.claude-3-5-sonnet-20241022-v2:0', family: undefined },
  ];
  for (const c of cases) it(c.name, () => assert.equal(bedrockEmbeddingFamily(c.model), c.family));
});

describe('embeddings requests to Bedrock InvokeModel', () => {
  const cases: { name: string; body: Record<string, unknown>; path: string; upstream: unknown }[] = [
    {
      name: 'Titan v2: one string → inputText, dimensions kept',
      body: { model: 'amazon.titan-embed-text-v2:0', input: 'hello world', dimensions: 256, encoding_format: 'float' },
      path: '/model/amazon.titan-embed-text-v2%3A0/invoke', upstream: { inputText: 'hello world', dimensions: 256 },
    },
    {
      name: 'Titan v2: an array of one string, normalize passed through',
      body: { model: 'amazon.titan-embed-text-v2:0', input: ['only one'], normalize: false },
      path: '/model/amazon.titan-embed-text-v2%3A0/invoke', upstream: { inputText: 'only one', normalize: false },
    },
    {
      name: 'Cohere v3: texts[], input_type defaults to search_document',
      body: { model: 'cohere.embed-english-v3', input: ['a', 'b'] },
      path: '/model/cohere.embed-english-v3/invoke', upstream: { texts: ['a', 'b'], input_type: 'search_document' },
    },
    {
      name: 'Cohere v4 profile: the client\'s input_type and truncate, dimensions → output_dimension',
      body: { model: 'us.cohere.embed-v4:0', input: 'query text', input_type: 'search_query', truncate: 'END', dimensions: 512 },
      path: '/model/us.cohere.embed-v4%3A0/invoke', upstream: { texts: ['query text'], input_type: 'search_query', truncate: 'END', output_dimension: 512 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = forward(plan(c.body));
      assert.deepEqual([p.upstream.host, p.upstream.method, p.upstream.path], ['bedrock-runtime.us-west-2.amazonaws.com', 'POST', c.path]);
      assert.deepEqual(p.upstream.credential, { kind: 'sigv4', service: 'bedrock', region: 'us-west-2' });
      assert.deepEqual([p.upstream.headers['content-type'], p.upstream.headers.accept], ['application/json', 'application/json']);
      assert.deepEqual(json(p.upstream.body), c.upstream);
    });
  }

  const refused: { name: string; body: Record<string, unknown>; status: number; param: string | null; message: RegExp }[] = [
    { name: 'Titan with several texts (no fan-out)', body: { model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] }, status: 400, param: 'input', message: /one text per request/ },
    { name: 'token ids', body: { model: 'cohere.embed-english-v3', input: [[1, 2, 3]] }, status: 400, param: 'input', message: /token-id input/ },
    { name: 'empty input array', body: { model: 'cohere.embed-english-v3', input: [] }, status: 400, param: 'input', message: /non-empty array/ },
    { name: 'unknown Cohere input_type', body: { model: 'cohere.embed-english-v3', input: 'x', input_type: 'query' }, status: 400, param: 'input_type', message: /input_type/ },
    { name: 'a model family without an embeddings translation', body: { model: 'amazon.titan-embed-image-v1', input: 'x' }, status: 501, param: null, message: /Embeddings is not supported by providerG/ },
  ];
  for (const c of refused) {
    it(`refused: ${c.name}`, () => {
      const p = plan(c.body);
      assert.equal(p.kind, 'respond');
      assert.equal(p.response.status, c.status);
      const err = (json(p.response.body) as { error: { message: string; param: string | null } }).error;
      assert.equal(err.param, c.param);
      assert.match(err.message, c.message);
    });
  }

  it('Anthropic has no embeddings API: 501, nothing planned upstream', () => {
    const p = plan({ model: 'claude-sonnet-4-5', input: 'x' }, { providerD: {} });
    assert.equal(p.kind, 'respond');
    assert.equal(p.response.status, 501);
  });
});

describe('embeddings answers from Bedrock', () => {
  const V1 = [0.0125, -0.5, 0.25];
  const V2 = [1, 0.375, -0.0625];
  const cases: { name: string; body: Record<string, unknown>; answer: unknown; headers?: Record<string, string>; data: unknown[]; tokens: number }[] = [
    {
      name: 'Titan v2 float (embedding, inputTextTokenCount, embeddingsByType)',
      body: { model: 'amazon.titan-embed-text-v2:0', input: 'hello world', encoding_format: 'float' },
      answer: { embedding: V1, inputTextTokenCount: 3, embeddingsByType: { float: V1 } },
      data: [{ object: 'embedding', index: 0, embedding: V1 }], tokens: 3,
    },
    {
      name: 'Titan v1 base64 (the openai SDK default)',
      body: { model: 'amazon.titan-embed-text-v1', input: 'hello', encoding_format: 'base64' },
      answer: { embedding: V1, inputTextTokenCount: 2 },
      data: [{ object: 'embedding', index: 0, embedding: float32Base64(V1) }], tokens: 2,
    },
    {
      name: 'Cohere embeddings_floats, tokens from x-amzn-bedrock-input-token-count',
      body: { model: 'cohere.embed-english-v3', input: ['a', 'b'] },
      answer: { id: 'emb-1', embeddings: [V1, V2], response_type: 'embeddings_floats', texts: ['a', 'b'] },
      headers: { 'x-amzn-bedrock-input-token-count': '7' },
      data: [{ object: 'embedding', index: 0, embedding: V1 }, { object: 'embedding', index: 1, embedding: V2 }], tokens: 7,
    },
    {
      name: 'Cohere embeddings_by_type (float), base64',
      body: { model: 'cohere.embed-v4:0', input: ['a', 'b'], encoding_format: 'base64' },
      answer: { id: 'emb-2', embeddings: { float: [V1, V2] }, response_type: 'embeddings_by_type', texts: ['a', 'b'] },
      headers: { 'x-amzn-bedrock-input-token-count': '4' },
      data: [{ object: 'embedding', index: 0, embedding: float32Base64(V1) }, { object: 'embedding', index: 1, embedding: float32Base64(V2) }], tokens: 4,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = forward(plan(c.body));
      const res = p.translateResponse(200, { 'content-type': 'application/json', ...c.headers }, Buffer.from(JSON.stringify(c.answer)));
      assert.equal(res.status, 200);
      assert.deepEqual(json(res.body), { object: 'list', data: c.data, model: c.body.model, usage: { prompt_tokens: c.tokens, total_tokens: c.tokens } });
      assert.deepEqual(res.usage, { inputTokens: c.tokens, outputTokens: 0, totalTokens: c.tokens });
    });
  }

  it('base64 is little-endian float32, as the openai SDK decodes it', () => {
    const b = Buffer.from(float32Base64([1, -2.5]), 'base64');
    assert.deepEqual([b.length, b.readFloatLE(0), b.readFloatLE(4)], [8, 1, -2.5]);
  });

  it('a Cohere answer with fewer vectors than texts is a 502, not a short list', () => {
    const p = forward(plan({ model: 'cohere.embed-english-v3', input: ['a', 'b'] }));
    const res = p.translateResponse(200, {}, Buffer.from(JSON.stringify({ embeddings: [V1], response_type: 'embeddings_floats' })));
    assert.equal(res.status, 502);
  });

  it('a Bedrock error keeps its status and message in OpenAI format', () => {
    const p = forward(plan({ model: 'amazon.titan-embed-text-v2:0', input: 'x' }));
    const res = p.translateResponse(400, { 'x-amzn-errortype': 'ValidationException' }, Buffer.from('{"message":"Malformed input request: #/dimensions: 300 is not a valid enum value"}'));
    assert.equal(res.status, 400);
    assert.deepEqual(json(res.body), { error: { message: 'Malformed input request: #/dimensions: 300 is not a valid enum value', type: 'invalid_request_error', param: null, code: 'ValidationException' } });
  });
});
