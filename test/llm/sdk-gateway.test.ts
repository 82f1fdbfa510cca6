/**
 * The official openai and Anthropic SDKs through a listening gateway built from YAML, against
 * local providers speaking OpenAI, Azure OpenAI and Anthropic wire formats: translation both
 * ways, streaming, credentials as each vendor expects them, policies.ai, priority groups and
 * errors in the client's format.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, streamFixture, type MockProvider } from './mock-provider.ts';

const weather = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

describe('LLM gateway with the official SDKs', () => {
  let openaiUp: MockProvider;
  let anthropicUp: MockProvider;
  let azureUp: MockProvider;
  let failing: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    [openaiUp, anthropicUp, azureUp, failing] = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider(), startMockProvider()]);
    gw = await startGateway(llmGatewayYaml([
      { name: 'openai', prefix: /* */ '/openai' },
      { name: 'anthropic', prefix: '/anthropic' },
      { name: 'azure', prefix: '/azure' },
      { name: 'tiers', prefix: '/tiers' },
    ], `
apiVersion: v1
kind: Secret
metadata: { name: keys }
stringData: { Authorization: "Bearer sk-openai", anthropic: sk-ant, azure: az-key }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: openai }
spec:
  ai:
    provider: { providerA: {}, host: ${openaiUp.host}, port: ${openaiUp.port} }
  policies:
    auth: { secretRef: { name: keys } }
    ai:
      routes: ${ROUTES}
      modelAliases: { fast: gpt-4o-mini }
      defaults: [{ field: temperature, value: 0.5 }]
      transformations: [{ field: user, expression: '"x-user" in request.headers ? request.headers["x-user"] : "anonymous"' }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: anthropic }
spec:
  ai:
    provider: { providerD: {}, host: ${anthropicUp.host}, port: ${anthropicUp.port} }
  policies:
    auth: { secretRef: { name: keys, key: anthropic } }
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: azure }
spec:
  ai:
    provider: { providerB: { endpoint: "https://acme.openai.azure.com/", deploymentName: gpt4o-prod, apiVersion: "2024-10-21" }, host: ${azureUp.host}, port: ${azureUp.port} }
  policies:
    auth: { secretRef: { name: keys, key: azure } }
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tiers }
spec:
  ai:
    groups:
      - providers:
          - { name: down, providerA: { model: gpt-4o }, host: ${failing.host}, port: ${failing.port} }
      - providers:
          - name: backup
            providerD: { model: claude-sonnet-4-5 }
            host: ${anthropicUp.host}
            port: ${anthropicUp.port}
            policies: { auth: { secretRef: { name: keys, key: anthropic } } }
  policies:
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([openaiUp, anthropicUp, azureUp, failing].map((m) => m?.stop()));
  });

  const openai = (prefix: string, extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0, ...extra });
  const anthropic = (prefix: string) => new Anthropic({ apiKey: 'client-key', baseURL: gw.url(80, prefix), maxRetries: 0 });

  it('reports every AI backend Accepted', () => {
    for (const name of ['openai', 'anthropic', 'azure', 'tiers']) {
      const conditions = gw.statusOf('ProxyBackend', name).conditions as { type: string; status: string }[];
      assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True', name);
    }
  });

  it('chat with tools: the backend key replaces the client key; aliases, defaults and CEL transformations apply', async () => {
    openaiUp.answer('/v1/chat/completions', responseFixture('openai-tool-calls'));
    const before = openaiUp.requests.length;
    const r = await openai('/openai', { defaultHeaders: { 'x-user': 'ada' } }).chat.completions.create({
      model: 'fast', messages: [{ role: 'user', content: 'Weather?' }], tools: [{ type: 'function', function: { name: 'get.weather', parameters: weather } }],
    });
    assert.equal(r.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(r.choices[0].message.tool_calls?.map((c) => c.type === 'function' && c.function.name), ['get.weather', 'get.weather']);
    const up = openaiUp.requests[before];
    assert.equal(up.path, '/v1/chat/completions');
    assert.equal(up.headers.authorization, 'Bearer sk-openai');
    const body = up.json();
    assert.equal(body.model, 'gpt-4o-mini');
    assert.equal(body.temperature, 0.5);
    assert.equal(body.user, 'ada');
  });

  it('streams chat chunks through with the usage chunk', async () => {
    openaiUp.answer('/v1/chat/completions', streamFixture('openai-tool-calls'));
    const stream = await openai('/openai').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Weather?' }] });
    const args: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) args.push(call.function?.arguments ?? '');
      if (chunk.usage) usage = chunk.usage;
    }
    assert.ok(args.join('').includes('city'));
    assert.ok(usage && usage.total_tokens > 0);
    assert.equal(openaiUp.requests.at(-1)?.json().stream_options && (openaiUp.requests.at(-1)?.json().stream_options as { include_usage: boolean }).include_usage, true);
  });

  it('serves embeddings and answers models from config', async () => {
    openaiUp.answer('/v1/embeddings', { body: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'text-embedding-3-small', usage: { prompt_tokens: 2, total_tokens: 2 } } });
    const e = await openai('/openai').embeddings.create({ model: 'text-embedding-3-small', input: 'hi', encoding_format: 'float' });
    assert.deepEqual(e.data[0].embedding, [0.1, 0.2]);
    const models = await openai('/openai').models.list();
    assert.ok(models.data.some((m) => m.id === 'fast'));
  });

  it('an Anthropic client talks to an OpenAI provider (messages ⇄ chat), streaming', async () => {
    openaiUp.answer('/v1/chat/completions', streamFixture('openai-text-usage'));
    const stream = anthropic('/openai').messages.stream({ model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    assert.ok(final.content.some((b) => b.type === 'text' && b.text.length > 0));
    assert.ok(final.usage.output_tokens > 0);
    assert.equal(openaiUp.requests.at(-1)?.path, '/v1/chat/completions');
  });

  it('Anthropic messages streaming with thinking and tools, x-api-key from the Secret', async () => {
    anthropicUp.answer('/v1/messages', streamFixture('anthropic-thinking-tool'));
    const stream = anthropic('/anthropic').messages.stream({
      model: 'claude-sonnet-4-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Weather?' }], tools: [{ name: 'get_weather', input_schema: weather }],
    });
    const final = await stream.finalMessage();
    assert.ok(final.content.some((b) => b.type === 'thinking' && b.signature.length > 0));
    assert.ok(final.content.some((b) => b.type === 'tool_use'));
    const up = anthropicUp.requests.at(-1)!;
    assert.equal(up.headers['x-api-key'], 'sk-ant');
    assert.equal(up.headers.authorization, undefined);
  });

  it('count_tokens goes to the provider', async () => {
    anthropicUp.answer('/v1/messages/count_tokens', { body: { input_tokens: 42 } });
    const r = await anthropic('/anthropic').messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(r.input_tokens, 42);
  });

  it('Azure OpenAI: deployment path, api-version and api-key', async () => {
    azureUp.answer('/openai/deployments/', responseFixture('openai-length'));
    const r = await openai('/azure').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(r.choices[0].finish_reason, 'length');
    const up = azureUp.requests.at(-1)!;
    assert.equal(up.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    assert.equal(up.headers['api-key'], 'az-key');
  });

  it('a failing priority group falls through to the next one', async () => {
    failing.answer('/', { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } });
    anthropicUp.answer('/v1/messages', responseFixture('anthropic-thinking-tool'));
    const tried = failing.requests.length;
    const r = await openai('/tiers').chat.completions.create({ model: 'any', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(failing.requests.length, tried + 1);
    assert.ok(r.choices[0].message.tool_calls?.length);
  });

  it('upstream 429 reaches the OpenAI SDK as a RateLimitError', async () => {
    azureUp.answer('/openai/responses', { status: 429, body: { error: { message: 'slow down', type: 'rate_limit_error' } } });
    await assert.rejects(openai('/azure').responses.create({ model: 'gpt-4o', input: 'Hi' }), (e: unknown) => e instanceof OpenAI.RateLimitError);
  });

  it('a stream cut before its end is an error event the Anthropic SDK raises', async () => {
    anthropicUp.answer('/v1/messages', streamFixture('anthropic-truncated'));
    await assert.rejects(anthropic('/anthropic').messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage());
  });

  it('invalid JSON is a 400 in the client format; an oversized body is a 413', async () => {
    const bad = await gw.request(80, { method: 'POST', path: '/anthropic/v1/messages', headers: { 'content-type': 'application/json' }, body: '{nope' });
    assert.equal(bad.status, 400);
    assert.equal((JSON.parse(bad.text) as { type: string }).type, 'error');
    const big = await gw.request(80, { method: 'POST', path: '/openai/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: `{"model":"m","pad":"${'x'.repeat(2 * 1024 * 1024)}"}` });
    assert.equal(big.status, 413);
    assert.ok((JSON.parse(big.text) as { error: { message: string } }).error.message.length > 0);
  });
});
