/**
 * Rerank to the cloud providers through a listening gateway, with a plain fetch client speaking
 * the Cohere-style request: Bedrock (providerG) reaches a mock of the Agent Runtime `Rerank` API
 * that verifies the SigV4 signature from first principles (service `bedrock`, the provider's
 * region, the signed host and body); Vertex (providerF) reaches a mock of the Discovery Engine
 * `rank` API that accepts only the access token the gateway got from a fake token endpoint with a
 * signed service-account JWT. Upstream errors come back in OpenAI's error format, status kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { awsKeysSecret, signedWithTestKeys, startFakeServiceAccount, type FakeServiceAccount } from './fake-cloud.ts';
import { llmGatewayYaml } from './gateway-yaml.ts';
import { startMockProvider, type Answer, type MockProvider, type RecordedRequest } from './mock-provider.ts';

const TOKEN = 'ya29.rank-token';
const DOCS = ['Berlin is the capital of Germany.', 'Paris is the capital of France.', 'France exports wine.'];

/** Bedrock Agent Runtime: 403 on a bad signature (as the service answers), else the ranking the test chose. */
function bedrockRerank(answer: (req: RecordedRequest) => Answer): (req: RecordedRequest) => Answer {
  return (req) => {
    const verdict = signedWithTestKeys(req, 'bedrock', 'eu-west-1');
    if (!verdict.ok) return { status: 403, headers: { 'x-amzn-errortype': 'InvalidSignatureException' }, body: { message: `The request signature we calculated does not match the signature you provided. (${verdict.reason})` } };
    return answer(req);
  };
}

describe('LLM Rerank to Bedrock and Vertex through the gateway', () => {
  let bedrock: MockProvider;
  let vertex: MockProvider;
  let account: FakeServiceAccount;
  let gw: GatewayHarness;

  before(async () => {
    [bedrock, vertex, account] = await Promise.all([startMockProvider(), startMockProvider(), startFakeServiceAccount(TOKEN)]);

    bedrock.answer('/rerank', bedrockRerank((req) => {
      const config = (req.json() as { rerankingConfiguration: { bedrockRerankingConfiguration: { numberOfResults: number; modelConfiguration: { modelArn: string } } } }).rerankingConfiguration.bedrockRerankingConfiguration;
      const arn = config.modelConfiguration.modelArn;
      if (!arn.startsWith('arn:aws:bedrock:eu-west-1::foundation-model/')) {
        return { status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message: `The provided model identifier is invalid: ${arn}` } };
      }
      // Documented answer shape: results best first, index = position in sources.
      const ranked = [{ index: 1, relevanceScore: 0.9921 }, { index: 2, relevanceScore: 0.2104 }, { index: 0, relevanceScore: 0.0312 }];
      return { status: 200, body: { results: ranked.slice(0, config.numberOfResults) } };
    }));
    vertex.answer('/v1/projects/', (req) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return { status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } };
      const body = req.json() as { model: string; records: { id: string }[] };
      if (body.model === 'no-such-ranker') return { status: 400, body: { error: { code: 400, message: 'Model no-such-ranker is not supported.', status: 'INVALID_ARGUMENT' } } };
      // ignoreRecordDetailsInResponse: only id and score come back, best first.
      return { status: 200, body: { records: [{ id: '1', score: 0.96 }, { id: '2', score: 0.31 }, { id: '0', score: 0.02 }] } };
    });

    gw = await startGateway(llmGatewayYaml([
      { name: 'bedrock', prefix: '/bedrock' },
      { name: 'bedrock-unsigned', prefix: '/unsigned' },
      { name: 'vertex', prefix: '/vertex' },
    ], `
${awsKeysSecret()}---
apiVersion: v1
kind: Secret
metadata: { name: aws-other }
stringData: { accessKey: AKIDOTHER, secretKey: not-the-right-secret }
---
${account.secret()}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: bedrock }
spec:
  ai:
    provider: { providerG: { region: eu-west-1 }, host: ${bedrock.host}, port: ${bedrock.port} }
  policies:
    auth: { cloudA: { secretRef: { name: aws } } }
    ai: { modelAliases: { ranker: cohere.rerank-v3-5:0, wrong: "arn:aws:bedrock:us-east-1::foundation-model/amazon.rerank-v1:0" } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: bedrock-unsigned }
spec:
  ai:
    provider: { providerG: { region: eu-west-1 }, host: ${bedrock.host}, port: ${bedrock.port} }
  policies:
    auth: { cloudA: { secretRef: { name: aws-other } } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: vertex }
spec:
  ai:
    provider: { providerF: { projectId: proj-1, region: us-central1 }, host: ${vertex.host}, port: ${vertex.port} }
  policies:
    auth: { cloudC: { secretRef: { name: gcp } } }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([bedrock, vertex, account?.tokens].map((m) => m?.stop()));
  });

  /** A plain rerank client: what Cohere's and Jina's HTTP APIs take. */
  async function rerank(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(gw.url(80, path), { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer client-key' }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json() as Record<string, unknown> };
  }

  it('Bedrock: signed for bedrock/eu-west-1, sent to /rerank with the model ARN, answered Cohere-style', async () => {
    const before = bedrock.requests.length;
    const res = await rerank('/bedrock/v2/rerank', { model: 'ranker', query: 'What is the capital of France?', documents: DOCS, top_n: 2 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(bedrock.requests.length, before + 1);
    const up = bedrock.requests.at(-1)!;
    assert.deepEqual([up.method, up.path], ['POST', '/rerank']);
    assert.match(String(up.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
    assert.deepEqual(up.json(), {
      queries: [{ type: 'TEXT', textQuery: { text: 'What is the capital of France?' } }],
      sources: DOCS.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
      rerankingConfiguration: { type: 'BEDROCK_RERANKING_MODEL', bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: 'arn:aws:bedrock:eu-west-1::foundation-model/cohere.rerank-v3-5:0' } } },
    });
    assert.equal(typeof res.json.id, 'string');
    assert.equal(res.json.model, 'cohere.rerank-v3-5:0');
    assert.deepEqual(res.json.results, [{ index: 1, relevance_score: 0.9921 }, { index: 2, relevance_score: 0.2104 }]);
  });

  it('Bedrock: return_documents gives back the documents the client sent', async () => {
    const res = await rerank('/bedrock/v1/rerank', { model: 'ranker', query: 'capital of France', documents: DOCS, return_documents: true });
    assert.equal(res.status, 200);
    assert.deepEqual((res.json.results as { document: unknown }[]).map((r) => r.document), [{ text: DOCS[1] }, { text: DOCS[2] }, { text: DOCS[0] }]);
  });

  it('Bedrock: a signature with the wrong secret is refused by the mock; the 403 reaches the client in OpenAI format', async () => {
    const res = await rerank('/unsigned/v1/rerank', { model: 'cohere.rerank-v3-5:0', query: 'q', documents: DOCS });
    assert.equal(res.status, 403);
    const err = res.json.error as { message: string; code: string; type: string };
    assert.match(err.message, /signature we calculated does not match.*unknown access key AKIDOTHER/);
    assert.deepEqual([err.code, err.type], ['InvalidSignatureException', 'permission_error']);
  });

  it('Bedrock: a ValidationException keeps its 400 and message', async () => {
    const res = await rerank('/bedrock/v1/rerank', { model: 'wrong', query: 'q', documents: DOCS });
    assert.equal(res.status, 400);
    const err = res.json.error as { message: string; code: string };
    assert.deepEqual([err.code, err.message], ['ValidationException', 'The provided model identifier is invalid: arn:aws:bedrock:us-east-1::foundation-model/amazon.rerank-v1:0']);
  });

  it('Vertex: Discovery Engine rank with the service account\'s token, records mapped back to document positions', async () => {
    const res = await rerank('/vertex/v1/rerank', { model: 'semantic-ranker-default@latest', query: 'What is the capital of France?', documents: DOCS, top_n: 2 });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const up = vertex.requests.at(-1)!;
    assert.deepEqual([up.method, up.path, up.headers.authorization], ['POST', '/v1/projects/proj-1/locations/global/rankingConfigs/default_ranking_config:rank', `Bearer ${TOKEN}`]);
    assert.deepEqual(up.json(), {
      model: 'semantic-ranker-default@latest', query: 'What is the capital of France?',
      records: DOCS.map((content, id) => ({ id: String(id), content })), topN: 2, ignoreRecordDetailsInResponse: true,
    });
    assert.deepEqual(res.json.results, [{ index: 1, relevance_score: 0.96 }, { index: 2, relevance_score: 0.31 }]);
    const grant = new URLSearchParams(account.tokens.requests.at(-1)!.body.toString());
    await account.verifyGrant(grant.get('assertion') ?? '');
  });

  it('Vertex: a Google INVALID_ARGUMENT comes back as an OpenAI error with the status kept', async () => {
    const res = await rerank('/vertex/v1/rerank', { model: 'no-such-ranker', query: 'q', documents: DOCS });
    assert.equal(res.status, 400);
    const err = res.json.error as { message: string; code: string };
    assert.deepEqual([err.code, err.message], ['INVALID_ARGUMENT', 'Model no-such-ranker is not supported.']);
  });

  it('a request neither API can express is refused before anything is sent', async () => {
    const [b, v] = [bedrock.requests.length, vertex.requests.length];
    const res = await rerank('/vertex/v1/rerank', { model: 'semantic-ranker-default@latest', query: 'q', documents: [{ a: 1 }], rank_fields: ['a'] });
    assert.equal(res.status, 400);
    assert.equal((res.json.error as { param: string }).param, 'rank_fields');
    assert.deepEqual([bedrock.requests.length, vertex.requests.length], [b, v]);
  });
});
