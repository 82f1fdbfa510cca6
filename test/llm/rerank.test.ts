/**
 * Rerank through a listening gateway: a Cohere-style `/v1/rerank` (and `/v2/rerank`) request
 * reaches a custom provider that declares the Rerank format, with the backend's key and the model
 * alias applied, and its answer comes back as the server sent it; providers without a rerank API
 * answer 501 in OpenAI's error format.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { startMockProvider, type MockProvider } from './mock-provider.ts';

/** The shape a Cohere-compatible rerank server answers with (Cohere v2 rerank reference; vLLM adds usage). */
const RERANKED = { id: 'rr-1', results: [{ index: 1, relevance_score: 0.97 }, { index: 0, relevance_score: 0.12 }], meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } };

describe('LLM Rerank through the gateway', () => {
  let server: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    server = await startMockProvider();
    server.answer('/rank', (req) => (req.headers.authorization === 'Bearer rr-key' ? { status: 200, body: RERANKED } : { status: 401, body: { message: 'invalid api token' } }));
    server.answer('/busy', { status: 429, body: { message: 'too many requests' } });
    gw = await startGateway(llmGatewayYaml([
      { name: 'reranker', prefix: '/reranker' },
      { name: 'busy', prefix: '/busy' },
      { name: 'openai', prefix: '/openai' },
    ], `
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: reranker }
spec:
  ai:
    provider: { custom: { formats: [{ type: Completions }, { type: Rerank, path: /rank }] }, host: ${server.host}, port: ${server.port} }
  policies:
    auth: { key: rr-key }
    ai: { routes: ${ROUTES}, modelAliases: { fast: rerank-v3.5 } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: busy }
spec:
  ai:
    provider: { custom: { formats: [{ type: Rerank, path: /busy }] }, host: ${server.host}, port: ${server.port} }
  policies:
    auth: { key: rr-key }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: openai }
spec:
  ai:
    provider: { providerA: {}, host: ${server.host}, port: ${server.port} }
  policies:
    auth: { key: sk-openai }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await server?.stop();
  });

  const rerank = (path: string, body: unknown) => gw.request(80, {
    method: 'POST', path, headers: { 'content-type': 'application/json', authorization: 'Bearer client-token' }, body: JSON.stringify(body),
  });
  const ask = { model: 'fast', query: 'What is the capital of France?', documents: ['Berlin is in Germany.', 'Paris is the capital of France.'], top_n: 2, return_documents: false };

  const cases = [
    { name: 'Cohere v1-style path', path: '/reranker/v1/rerank' },
    { name: 'Cohere v2 path', path: '/reranker/v2/rerank' },
  ];
  for (const c of cases) {
    it(`${c.name}: sent to the declared Rerank path with the backend key and the aliased model`, async () => {
      const before = server.requests.length;
      const res = await rerank(c.path, ask);
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.text), RERANKED);
      assert.equal(server.requests.length, before + 1);
      const up = server.requests.at(-1)!;
      assert.deepEqual([up.method, up.path, up.headers.authorization], ['POST', '/rank', 'Bearer rr-key']);
      assert.deepEqual(up.json(), { ...ask, model: 'rerank-v3.5' });
    });
  }

  it("the server's error status and body come back as they are (429)", async () => {
    const res = await rerank('/busy/v1/rerank', ask);
    assert.equal(res.status, 429);
    assert.deepEqual(JSON.parse(res.text), { message: 'too many requests' });
  });

  it('a provider without a rerank API answers 501 in OpenAI error format, nothing sent upstream', async () => {
    const before = server.requests.length;
    const res = await rerank('/openai/v1/rerank', ask);
    assert.equal(res.status, 501);
    const err = JSON.parse(res.text) as { error: { message: string; type: string } };
    assert.match(err.error.message, /Rerank is not supported by providerA/);
    assert.equal(typeof err.error.type, 'string');
    assert.equal(server.requests.length, before);
  });
});
