/**
 * The `llm` CEL variables docs/cel.md promises, through a gateway and the official openai client:
 * an AI policy's `transformations` (the request phase, before the provider is called) see
 * `llm.provider` (the provider's name, `default` for a single one), `llm.requestModel` and
 * `llm.streaming`, for buffered and streamed requests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from '../llm/gateway-yaml.ts';
import { startMockProvider, streamFixture, type MockProvider } from '../llm/mock-provider.ts';

describe('llm CEL variables in the request phase', () => {
  let provider: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    provider = await startMockProvider();
    gw = await startGateway(llmGatewayYaml([{ name: 'openai', prefix: '/openai' }], `
apiVersion: v1
kind: Secret
metadata: { name: keys }
stringData: { Authorization: "Bearer sk-openai" }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: openai }
spec:
  ai:
    provider: { providerA: {}, host: ${provider.host}, port: ${provider.port} }
  policies:
    auth: { secretRef: { name: keys } }
    ai:
      routes: ${ROUTES}
      transformations:
        - { field: user, expression: 'llm.provider + "|" + llm.requestModel + "|" + string(llm.streaming)' }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await provider?.stop();
  });

  const openai = () => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, '/openai/v1'), maxRetries: 0 });

  it('a buffered request: provider, requested model, not streaming', async () => {
    provider.answer('/v1/chat/completions', {
      status: 200,
      body: { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
    });
    await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(provider.requests.at(-1)?.json().user, 'default|gpt-4o|false');
  });

  it('a streamed request: streaming is true', async () => {
    provider.answer('/v1/chat/completions', streamFixture('openai-tool-calls'));
    const stream = await openai().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    for await (const _chunk of stream) { /* drain */ }
    assert.equal(provider.requests.at(-1)?.json().user, 'default|gpt-4o-mini|true');
  });
});
