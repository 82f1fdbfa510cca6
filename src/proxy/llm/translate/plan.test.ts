import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deterministicContext } from './context.ts';
import type { LLMProvider } from './config.ts';
import { planRequest, type ForwardPlan } from './plan.ts';
import { feed } from './testing/fixtures.ts';

const ctx = deterministicContext();

function forward(p: ReturnType<typeof planRequest>): ForwardPlan {
  assert.equal(p.kind, 'forward');
  return p;
}

describe('planRequest', () => {
  it('identity: the client body goes upstream byte for byte, unknown fields and formatting included', () => {
    const raw = Buffer.from('{"model":"gpt-4o",  "messages":[{"role":"user","content":"hi"}],"x_vendor_field":{"keep":true}}');
    const plan = forward(planRequest({ routeType: 'Completions', provider: { providerA: {} }, body: raw, context: ctx }));
    assert.equal(plan.upstream.body, raw);
    const upstreamAnswer = Buffer.from('{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5},"extra":1}');
    const res = plan.translateResponse(200, { 'content-type': 'application/json' }, upstreamAnswer);
    assert.equal(res.body, upstreamAnswer);
    assert.deepEqual(res.usage, { inputTokens: 3, outputTokens: 2, totalTokens: 5 });
  });

  it('identity streaming asks OpenAI for usage and passes the stream through unchanged', () => {
    const raw = Buffer.from(JSON.stringify({ model: 'gpt-4o', stream: true, messages: [], extra: 1 }));
    const plan = forward(planRequest({ routeType: 'Completions', provider: { providerA: {} }, body: raw, context: ctx }));
    assert.deepEqual(JSON.parse(Buffer.from(plan.upstream.body).toString()), { model: 'gpt-4o', stream: true, messages: [], extra: 1, stream_options: { include_usage: true } });
    const sse = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\ndata: [DONE]\n\n';
    const t = plan.createStreamTranslator();
    assert.equal(feed((c) => t.push(c), () => t.end(), Buffer.from(sse), 5), sse);
    assert.deepEqual(t.usage(), { inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    assert.equal(t.failed, false);
  });

  it('identity streaming appends an error in the client format when the upstream is cut off', () => {
    const raw = Buffer.from(JSON.stringify({ model: 'claude', stream: true, max_tokens: 5, messages: [] }));
    const plan = forward(planRequest({ routeType: 'Messages', provider: { providerD: {} }, body: raw, context: ctx }));
    const cut = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n';
    const t = plan.createStreamTranslator();
    const out = feed((c) => t.push(c), () => t.end(), Buffer.from(cut), 0);
    assert.ok(out.startsWith(cut));
    assert.match(out.slice(cut.length), /^event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    assert.equal(t.failed, true);
  });

  it('model aliases resolve before the provider sees the model; the provider override wins over both', () => {
    const body = Buffer.from(JSON.stringify({ model: 'fast', messages: [] }));
    const aliased = forward(planRequest({ routeType: 'Completions', provider: { providerA: {} }, body, modelAliases: { fast: 'gpt-4o-mini' }, context: ctx }));
    assert.equal(aliased.model, 'gpt-4o-mini');
    const pinned = forward(planRequest({ routeType: 'Completions', provider: { providerA: { model: 'gpt-4.1' } }, body, modelAliases: { fast: 'gpt-4o-mini' }, context: ctx }));
    assert.equal(pinned.model, 'gpt-4.1');
  });

  it('pathPrefix and path overrides (providerA, providerD)', () => {
    const body = Buffer.from(JSON.stringify({ model: 'm', max_tokens: 1, messages: [] }));
    assert.equal(forward(planRequest({ routeType: 'Completions', provider: { providerA: {}, pathPrefix: '/openai/v2' }, body })).upstream.path, '/openai/v2/chat/completions');
    assert.equal(forward(planRequest({ routeType: 'Messages', provider: { providerD: {}, path: '/proxy/messages' }, body })).upstream.path, '/proxy/messages');
    const custom = forward(planRequest({ routeType: 'Completions', provider: { custom: { formats: [{ type: 'Completions', path: '/api/chat' }] }, host: '10.0.0.1', port: 443 }, body }));
    assert.deepEqual([custom.upstream.host, custom.upstream.port, custom.upstream.tls, custom.upstream.path], ['10.0.0.1', 443, true, '/api/chat']);
  });

  it('client mistakes become answers in the client format, never throws', () => {
    const bad = planRequest({ routeType: 'Messages', provider: { providerD: {} }, body: Buffer.from('{not json') });
    assert.equal(bad.kind, 'respond');
    assert.deepEqual(JSON.parse(Buffer.from(bad.response.body).toString()), { type: 'error', error: { type: 'invalid_request_error', message: 'request body must be a JSON object' } });
    const malformed = planRequest({ routeType: 'Completions', provider: { providerD: {} }, body: Buffer.from('{"model":"m","messages":[{"role":"user","content":5}]}') });
    assert.equal(malformed.kind, 'respond');
    assert.equal(malformed.response.status, 400);
    const noModel = planRequest({ routeType: 'Completions', provider: { providerA: {} }, body: Buffer.from('{"messages":[]}') });
    assert.equal(noModel.kind, 'respond');
    assert.equal(noModel.response.status, 400);
  });

  // Found by the request fuzz property (test/hostile/fuzz-llm-request.test.ts): a TypeError, not a 400.
  for (const fn of [{ name: '', arguments: null }, { name: null, arguments: '{}' }, { name: 'f', arguments: { a: 1 } }, null]) {
    it(`an assistant tool call with function ${JSON.stringify(fn)} is a 400 on a translated route, never a throw`, () => {
      const body = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: fn }] }] }));
      const planned = planRequest({ routeType: 'Completions', provider: { providerD: {} }, body });
      assert.equal(planned.kind, 'respond');
      assert.equal(planned.response.status, 400);
    });
  }

  const realtimeCases: { name: string; provider: LLMProvider; path: string; aliases?: Record<string, string>; expect: { host: string; path: string; credential: string } | number }[] = [
    { name: 'providerA: model override replaces the query model, other parameters kept', provider: { providerA: { model: 'gpt-realtime' } }, path: '/v1/realtime?model=x&foo=1', expect: { host: 'api.openai.com', path: '/v1/realtime?model=gpt-realtime&foo=1', credential: 'authorization' } },
    { name: 'providerA: alias applied to the query model', provider: { providerA: {} }, path: '/v1/realtime?model=voice', aliases: { voice: 'gpt-realtime-mini' }, expect: { host: 'api.openai.com', path: '/v1/realtime?model=gpt-realtime-mini', credential: 'authorization' } },
    { name: 'providerB v1 (GA): /openai/v1/realtime?model=<deployment>', provider: { providerB: { endpoint: 'https://acme.openai.azure.com/' } }, path: '/v1/realtime?model=rt-prod', expect: { host: 'acme.openai.azure.com', path: '/openai/v1/realtime?model=rt-prod', credential: 'api-key' } },
    { name: 'providerB preview: /openai/realtime with api-version and deployment, the provider\'s parameters win', provider: { providerB: { endpoint: 'acme.openai.azure.com', apiVersion: '2025-04-01-preview', deploymentName: 'rt' } }, path: '/v1/realtime?api-version=old&deployment=other', expect: { host: 'acme.openai.azure.com', path: '/openai/realtime?api-version=2025-04-01-preview&deployment=rt', credential: 'api-key' } },
    { name: 'providerC Foundry: resource-level GA path, model pinned', provider: { providerC: { resourceName: 'acme', resourceType: 'ResourceTypeB', projectName: 'p', model: 'gpt-realtime' } }, path: '/v1/realtime', expect: { host: 'acme.services.ai.azure.com', path: '/openai/v1/realtime?model=gpt-realtime', credential: 'api-key' } },
    { name: 'custom with a Realtime format and path', provider: { custom: { formats: [{ type: 'Realtime', path: '/ws/realtime' }] }, host: 'rt.internal', port: 8080 }, path: '/v1/realtime?model=m', expect: { host: 'rt.internal', path: '/ws/realtime?model=m', credential: 'authorization' } },
    { name: 'providerD (no realtime API): 501', provider: { providerD: {} }, path: '/v1/realtime?model=claude', expect: 501 },
    { name: 'custom without a Realtime format: 501', provider: { custom: { formats: [{ type: 'Completions' }] }, host: 'h', port: 80 }, path: '/v1/realtime?model=m', expect: 501 },
  ];
  for (const c of realtimeCases) {
    it(`Realtime: ${c.name}`, () => {
      const planned = planRequest({ routeType: 'Realtime', provider: c.provider, body: new Uint8Array(0), path: c.path, method: 'GET', modelAliases: c.aliases });
      if (typeof c.expect === 'number') {
        assert.equal(planned.kind, 'respond');
        assert.equal(planned.response.status, c.expect);
        return;
      }
      const p = forward(planned);
      const hint = p.upstream.credential;
      assert.deepEqual({ host: p.upstream.host, path: p.upstream.path, credential: hint.kind === 'header' ? hint.name : hint.kind, method: p.upstream.method }, { ...c.expect, method: 'GET' });
    });
  }

  const rerankBody = { model: 'rerank-v3.5', query: 'capital of France?', documents: ['Paris is the capital.', 'Berlin is in Germany.'], top_n: 1 };
  const rerankCases: { name: string; provider: LLMProvider; body?: unknown; aliases?: Record<string, string>; expect: { host: string; path: string; model: string } | { status: number; message: RegExp } }[] = [
    { name: 'custom Rerank format: default path, client body and model', provider: { custom: { formats: [{ type: 'Completions' }, { type: 'Rerank' }] }, host: 'tei.internal', port: 8080 }, expect: { host: 'tei.internal', path: '/v1/rerank', model: 'rerank-v3.5' } },
    { name: 'custom Rerank format with its own path and a pinned model', provider: { custom: { formats: [{ type: 'Rerank', path: '/v2/rerank' }], model: 'bge-reranker-v2-m3' }, host: 'vllm', port: 8000 }, expect: { host: 'vllm', path: '/v2/rerank', model: 'bge-reranker-v2-m3' } },
    { name: 'an alias picks the provider model', provider: { custom: { formats: [{ type: 'Rerank' }] }, host: 'h', port: 80 }, body: { ...rerankBody, model: 'fast-rerank' }, aliases: { 'fast-rerank': 'jina-reranker-v2' }, expect: { host: 'h', path: '/v1/rerank', model: 'jina-reranker-v2' } },
    { name: 'custom without a Rerank format: 501', provider: { custom: { formats: [{ type: 'Completions' }] }, host: 'h', port: 80 }, expect: { status: 501, message: /Rerank is not supported by custom/ } },
    { name: 'providerA (no rerank API): 501', provider: { providerA: {} }, expect: { status: 501, message: /Rerank is not supported by providerA/ } },
    { name: 'providerD (Anthropic has no rerank API): 501', provider: { providerD: {} }, expect: { status: 501, message: /Rerank is not supported by providerD/ } },
    { name: 'no model anywhere: 400', provider: { custom: { formats: [{ type: 'Rerank' }] }, host: 'h', port: 80 }, body: { query: 'q', documents: ['a'] }, expect: { status: 400, message: /model/ } },
  ];
  for (const c of rerankCases) {
    it(`Rerank: ${c.name}`, () => {
      const planned = planRequest({ routeType: 'Rerank', provider: c.provider, body: Buffer.from(JSON.stringify(c.body ?? rerankBody)), modelAliases: c.aliases });
      if ('status' in c.expect) {
        assert.equal(planned.kind, 'respond');
        assert.equal(planned.response.status, c.expect.status);
        const err = JSON.parse(Buffer.from(planned.response.body).toString()) as { error: { message: string; type: string } };
        assert.match(err.error.message, c.expect.message, 'an OpenAI-format error');
        return;
      }
      const p = forward(planned);
      const sent = JSON.parse(Buffer.from(p.upstream.body).toString()) as Record<string, unknown>;
      assert.deepEqual({ host: p.upstream.host, path: p.upstream.path, model: sent.model }, c.expect);
      assert.deepEqual({ ...sent, model: undefined }, { ...(c.body ?? rerankBody) as object, model: undefined }, 'everything but the model goes as the client sent it');
      assert.equal(p.upstream.method, 'POST');
    });
  }

  it('Rerank: the answer passes through; token usage is read where the server reports it', () => {
    const p = forward(planRequest({ routeType: 'Rerank', provider: { custom: { formats: [{ type: 'Rerank' }] }, host: 'h', port: 80 }, body: Buffer.from(JSON.stringify(rerankBody)) }));
    const answer = Buffer.from('{"id":"r1","model":"rerank-v3.5","usage":{"total_tokens":23},"results":[{"index":0,"relevance_score":0.98}]}');
    const r = p.translateResponse(200, { 'content-type': 'application/json' }, answer);
    assert.equal(r.body, answer);
    assert.deepEqual(r.usage, { inputTokens: 23, outputTokens: 0, totalTokens: 23 });
    const cohere = p.translateResponse(200, {}, Buffer.from('{"id":"r2","results":[{"index":1,"relevance_score":0.5}],"meta":{"billed_units":{"search_units":1}}}'));
    assert.equal(cohere.usage, undefined);
  });

  it('an upstream body that is not the promised format becomes a 502 in the client format', () => {
    const plan = forward(planRequest({ routeType: 'Messages', provider: { providerA: {} }, body: Buffer.from('{"model":"m","max_tokens":5,"messages":[]}') }));
    const r = plan.translateResponse(200, {}, Buffer.from('<html>oops</html>'));
    assert.equal(r.status, 502);
    assert.equal((JSON.parse(Buffer.from(r.body).toString()) as { type: string }).type, 'error');
  });

  it('count_tokens: Gemini and Bedrock answers become Anthropic count_tokens answers', () => {
    const body = Buffer.from(JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }));
    const gem = forward(planRequest({ routeType: 'TokenCount', provider: { providerE: {} }, body }));
    assert.deepEqual(JSON.parse(Buffer.from(gem.translateResponse(200, {}, Buffer.from('{"totalTokens":7}')).body).toString()), { input_tokens: 7 });
    const br = forward(planRequest({ routeType: 'TokenCount', provider: { providerG: {} }, body }));
    assert.equal(br.upstream.path, '/model/gemini-2.5-flash/count-tokens');
    assert.deepEqual(JSON.parse(Buffer.from(br.translateResponse(200, {}, Buffer.from('{"inputTokens":9}')).body).toString()), { input_tokens: 9 });
    assert.equal(br.translateResponse(200, {}, Buffer.from('nope')).status, 502);
  });

  it('Passthrough forwards path, method and body untouched', () => {
    const body = Buffer.from('anything');
    const p = forward(planRequest({ routeType: 'Passthrough', provider: { providerD: {} }, body, path: '/v1/files', method: 'GET' }));
    assert.deepEqual([p.upstream.method, p.upstream.path, p.upstream.body, p.upstream.host], ['GET', '/v1/files', body, 'api.anthropic.com']);
    assert.deepEqual(p.upstream.credential, { kind: 'header', name: 'x-api-key' });
  });
});
