/**
 * Rerank conversions through the facade: a Cohere/Jina-style client request → the exact Bedrock
 * Agent Runtime `Rerank` / Discovery Engine `rank` request (host, path, credential, body), and
 * the providers' documented answers → the Cohere-style answer. Upstream shapes follow the
 * vendors' API references (Bedrock RerankRequest/RerankResponse; Discovery Engine RankRequest,
 * RankingRecord).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LLMProvider } from '../../config.ts';
import { deterministicContext } from '../../context.ts';
import { planRequest, type ForwardPlan, type PlanInput } from '../../plan.ts';

const BEDROCK: LLMProvider = { providerG: { region: 'eu-central-1' } };
const VERTEX: LLMProvider = { providerF: { projectId: 'proj-1', region: 'us-central1' } };
const DOCS = ['Berlin is in Germany.', 'Paris is the capital of France.', 'Lyon is in France.'];

function plan(provider: LLMProvider, body: unknown, extra: Partial<PlanInput> = {}): ReturnType<typeof planRequest> {
  return planRequest({ routeType: 'Rerank', provider, body: Buffer.from(JSON.stringify(body)), context: deterministicContext(), ...extra });
}

function forward(p: ReturnType<typeof planRequest>): ForwardPlan {
  assert.equal(p.kind, 'forward');
  return p;
}

const json = (b: Uint8Array) => JSON.parse(Buffer.from(b).toString('utf8')) as unknown;

describe('rerank requests to Bedrock and Vertex', () => {
  const cases: { name: string; provider: LLMProvider; body: Record<string, unknown>; aliases?: Record<string, string>; host: string; path: string; credential: unknown; upstream: unknown }[] = [
    {
      name: 'Bedrock: strings, top_n → numberOfResults, model id → foundation-model ARN in the provider region',
      provider: BEDROCK,
      body: { model: 'cohere.rerank-v3-5:0', query: 'capital of France?', documents: DOCS, top_n: 2 },
      host: 'bedrock-agent-runtime.eu-central-1.amazonaws.com', path: '/rerank', credential: { kind: 'sigv4', service: 'bedrock', region: 'eu-central-1' },
      upstream: {
        queries: [{ type: 'TEXT', textQuery: { text: 'capital of France?' } }],
        sources: DOCS.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
        rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: 'arn:aws:bedrock:eu-central-1::foundation-model/cohere.rerank-v3-5:0' } } },
      },
    },
    {
      name: 'Bedrock: no top_n asks for every document; {text} objects are text, other objects JSON documents; an ARN stays as it is; aliases apply',
      provider: { providerG: {} },
      aliases: { ranker: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' },
      body: { model: 'ranker', query: 'q', documents: [{ text: 'plain' }, { title: 'T', body: 'B' }] },
      host: 'bedrock-agent-runtime.us-east-1.amazonaws.com', path: '/rerank', credential: { kind: 'sigv4', service: 'bedrock', region: 'us-east-1' },
      upstream: {
        queries: [{ type: 'TEXT', textQuery: { text: 'q' } }],
        sources: [
          { type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text: 'plain' } } },
          { type: 'INLINE', inlineDocumentSource: { type: 'JSON', jsonDocument: { title: 'T', body: 'B' } } },
        ],
        rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' } } },
      },
    },
    {
      name: 'Vertex: Discovery Engine rank on its global host, records keyed by position, topN',
      provider: VERTEX,
      body: { model: 'semantic-ranker-default@latest', query: 'capital of France?', documents: DOCS, top_n: 1 },
      host: 'discoveryengine.googleapis.com', path: '/v1/projects/proj-1/locations/global/rankingConfigs/default_ranking_config:rank', credential: { kind: 'header', name: 'authorization', prefix: 'Bearer ' },
      upstream: {
        model: 'semantic-ranker-default@latest', query: 'capital of France?',
        records: DOCS.map((content, i) => ({ id: String(i), content })),
        topN: 1, ignoreRecordDetailsInResponse: true,
      },
    },
    {
      name: 'Vertex: a document title becomes the record title; an object without text is scored as its JSON',
      provider: VERTEX,
      body: { model: 'semantic-ranker-fast-004', query: 'q', documents: [{ title: 'Paris', text: 'capital' }, { n: 1 }] },
      host: 'discoveryengine.googleapis.com', path: '/v1/projects/proj-1/locations/global/rankingConfigs/default_ranking_config:rank', credential: { kind: 'header', name: 'authorization', prefix: 'Bearer ' },
      upstream: {
        model: 'semantic-ranker-fast-004', query: 'q',
        records: [{ id: '0', title: 'Paris', content: 'capital' }, { id: '1', content: '{"n":1}' }],
        ignoreRecordDetailsInResponse: true,
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = forward(plan(c.provider, c.body, c.aliases ? { modelAliases: c.aliases } : {}));
      assert.deepEqual([p.upstream.host, p.upstream.port, p.upstream.tls, p.upstream.method, p.upstream.path], [c.host, 443, true, 'POST', c.path]);
      assert.deepEqual(p.upstream.credential, c.credential);
      assert.equal(p.upstream.headers['content-type'], 'application/json');
      assert.deepEqual(json(p.upstream.body), c.upstream);
      assert.equal(p.stream, false);
    });
  }

  it('a host/port override on the provider addresses the rerank host too', () => {
    const p = forward(plan({ providerG: { region: 'us-west-2' }, host: '127.0.0.1', port: 8443 }, { model: 'cohere.rerank-v3-5:0', query: 'q', documents: ['a'] }));
    assert.deepEqual([p.upstream.host, p.upstream.port, p.upstream.tls], ['127.0.0.1', 8443, false]);
  });
});

describe('rerank client mistakes (400 in OpenAI format, nothing planned upstream)', () => {
  const cases: { name: string; body: Record<string, unknown>; param: string }[] = [
    { name: 'no query', body: { model: 'm', documents: ['a'] }, param: 'query' },
    { name: 'empty documents', body: { model: 'm', query: 'q', documents: [] }, param: 'documents' },
    { name: 'a document that is neither string nor object', body: { model: 'm', query: 'q', documents: ['a', 3] }, param: 'documents' },
    { name: 'top_n zero', body: { model: 'm', query: 'q', documents: ['a'], top_n: 0 }, param: 'top_n' },
    { name: 'rank_fields (Cohere v1) has no equivalent', body: { model: 'm', query: 'q', documents: [{ a: 'x' }], rank_fields: ['a'] }, param: 'rank_fields' },
    { name: 'max_tokens_per_doc has no equivalent', body: { model: 'm', query: 'q', documents: ['a'], max_tokens_per_doc: 512 }, param: 'max_tokens_per_doc' },
  ];
  for (const provider of [BEDROCK, VERTEX]) {
    for (const c of cases) {
      it(`${Object.keys(provider)[0]}: ${c.name}`, () => {
        const p = plan(provider, c.body);
        assert.equal(p.kind, 'respond');
        assert.equal(p.response.status, 400);
        assert.equal((json(p.response.body) as { error: { param: string } }).error.param, c.param);
      });
    }
  }
});

describe('rerank answers from Bedrock and Vertex', () => {
  const ask = { model: 'm', query: 'capital of France?', documents: DOCS };
  const cases: { name: string; provider: LLMProvider; body: Record<string, unknown>; answer: unknown; client: unknown }[] = [
    {
      name: 'Bedrock results → Cohere results, best first',
      provider: BEDROCK, body: ask,
      answer: { results: [{ index: 1, relevanceScore: 0.9875 }, { index: 2, relevanceScore: 0.4531 }, { index: 0, relevanceScore: 0.0022 }] },
      client: { id: 'rerank-0001', model: 'm', results: [{ index: 1, relevance_score: 0.9875 }, { index: 2, relevance_score: 0.4531 }, { index: 0, relevance_score: 0.0022 }] },
    },
    {
      name: 'Bedrock with return_documents: the documents the client sent, strings as {text}',
      provider: BEDROCK, body: { ...ask, documents: ['a', { text: 'b', id: 7 }], return_documents: true, top_n: 2 },
      answer: { results: [{ index: 1, relevanceScore: 0.7, document: { type: 'TEXT', textDocument: { text: 'b' } } }, { index: 0, relevanceScore: 0.1 }] },
      client: { id: 'rerank-0001', model: 'm', results: [{ index: 1, relevance_score: 0.7, document: { text: 'b', id: 7 } }, { index: 0, relevance_score: 0.1, document: { text: 'a' } }] },
    },
    {
      name: 'Vertex records (id + score) → results by position, re-sorted, cut to top_n',
      provider: VERTEX, body: { ...ask, top_n: 2 },
      answer: { records: [{ id: '2', score: 0.41 }, { id: '1', score: 0.98 }] },
      client: { id: 'rerank-0001', model: 'm', results: [{ index: 1, relevance_score: 0.98 }, { index: 2, relevance_score: 0.41 }] },
    },
    {
      name: 'Vertex with no records at all (nothing relevant) → empty results',
      provider: VERTEX, body: ask, answer: {},
      client: { id: 'rerank-0001', model: 'm', results: [] },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = forward(plan(c.provider, c.body));
      const res = p.translateResponse(200, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify(c.answer)));
      assert.equal(res.status, 200);
      assert.deepEqual(json(res.body), c.client);
    });
  }

  const errors: { name: string; provider: LLMProvider; status: number; headers: Record<string, string>; answer: unknown; message: string; code: string | null }[] = [
    {
      name: 'Bedrock ValidationException (x-amzn-errortype) keeps its status and message',
      provider: BEDROCK, status: 400, headers: { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      answer: { message: 'The provided model identifier is invalid.' }, message: 'The provided model identifier is invalid.', code: 'ValidationException',
    },
    {
      name: 'Bedrock throttling (429)',
      provider: BEDROCK, status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException' }, answer: { message: 'Too many requests, please wait before trying again.' },
      message: 'Too many requests, please wait before trying again.', code: 'ThrottlingException',
    },
    {
      name: 'Google PERMISSION_DENIED (403)',
      provider: VERTEX, status: 403, headers: {},
      answer: { error: { code: 403, message: 'Permission \'discoveryengine.rankingConfigs.rank\' denied', status: 'PERMISSION_DENIED' } },
      message: 'Permission \'discoveryengine.rankingConfigs.rank\' denied', code: 'PERMISSION_DENIED',
    },
  ];
  for (const c of errors) {
    it(`error: ${c.name}`, () => {
      const p = forward(plan(c.provider, ask));
      const res = p.translateResponse(c.status, { 'content-type': 'application/json', ...c.headers }, Buffer.from(JSON.stringify(c.answer)));
      assert.equal(res.status, c.status);
      const err = (json(res.body) as { error: { message: string; code: string | null; type: string } }).error;
      assert.deepEqual([err.message, err.code], [c.message, c.code]);
    });
  }

  const malformed: { name: string; provider: LLMProvider; answer: unknown }[] = [
    { name: 'Bedrock without results', provider: BEDROCK, answer: { items: [] } },
    { name: 'Bedrock index outside the documents', provider: BEDROCK, answer: { results: [{ index: 3, relevanceScore: 0.5 }] } },
    { name: 'Vertex record id that the gateway did not send', provider: VERTEX, answer: { records: [{ id: 'doc-a', score: 0.5 }] } },
  ];
  for (const c of malformed) {
    it(`502 for an answer that is not the documented shape: ${c.name}`, () => {
      const p = forward(plan(c.provider, ask));
      const res = p.translateResponse(200, {}, Buffer.from(JSON.stringify(c.answer)));
      assert.equal(res.status, 502);
      assert.match((json(res.body) as { error: { message: string } }).error.message, /not a valid (bedrock_rerank|vertex_rank) response/);
    });
  }
});
