/**
 * `providerA.moderation` through a listening gateway with the official openai client: the
 * provider receives OpenAI's inline `moderation` parameter on chat completions and Responses
 * when it is set (the operator's value over the client's), and nothing when it is not; the
 * answer's moderation results reach the client as the provider sent them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { ROUTES, llmGatewayYaml } from './gateway-yaml.ts';
import { startMockProvider, type Answer, type MockProvider, type RecordedRequest } from './mock-provider.ts';

const RESULTS = { type: 'moderation_results', model: 'omni-moderation-latest', results: [{ type: 'moderation_result', flagged: false, model: 'omni-moderation-latest', categories: { violence: false }, category_scores: { violence: 0.001 }, category_applied_input_types: { violence: ['text'] } }] };

function answer(req: RecordedRequest): Answer {
  if (req.path.endsWith('/responses')) {
    return { body: { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } } };
  }
  return { body: {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    moderation: { input: RESULTS, output: RESULTS },
  } };
}

describe('providerA.moderation (official openai client)', () => {
  let up: MockProvider;
  let gw: GatewayHarness;
  const backend = (name: string, providerA: string) => `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { providerA: ${providerA}, host: ${up.host}, port: ${up.port} }
  policies:
    ai: { routes: ${ROUTES} }
`;
  before(async () => {
    up = await startMockProvider();
    up.answer('/', answer);
    gw = await startGateway(llmGatewayYaml([{ name: 'moderated', prefix: '/moderated' }, { name: 'plain', prefix: '/plain' }], [
      backend('moderated', '{ moderation: { policy: { input: { mode: Block }, output: { mode: Score } } } }'),
      backend('plain', '{}'),
    ].join('---\n')));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await up?.stop();
  });
  const openai = (prefix: string) => new OpenAI({ apiKey: 'k', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });
  const expected = { model: 'omni-moderation-latest', policy: { input: { mode: 'block' }, output: { mode: 'score' } } };

  it('set: chat completions and Responses requests carry the parameter; the client sees the results', async () => {
    const r = await openai('/moderated').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(up.requests.at(-1)!.json().moderation, expected);
    assert.deepEqual((r as unknown as { moderation: unknown }).moderation, { input: RESULTS, output: RESULTS });
    await openai('/moderated').responses.create({ model: 'gpt-4o', input: 'hi' });
    assert.deepEqual(up.requests.at(-1)!.json().moderation, expected);
  });

  it("set: the operator's policy replaces the client's", async () => {
    await openai('/moderated').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], moderation: { model: 'x', policy: { input: { mode: 'score' } } } } as never);
    assert.deepEqual(up.requests.at(-1)!.json().moderation, expected);
  });

  it('unset: not injected', async () => {
    await openai('/plain').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal('moderation' in up.requests.at(-1)!.json(), false);
  });
});
