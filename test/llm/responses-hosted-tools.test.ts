/**
 * The openai SDK's Responses client through a listening gateway to providers that do not speak
 * Responses: web search becomes Anthropic's web_search server tool or Gemini's googleSearch and
 * the searched answer comes back as output text (buffered and streamed); state the provider
 * cannot hold (previous_response_id, conversation) and OpenAI-only hosted tools are refused with
 * a 400 the SDK reads, naming the parameter or tool, and nothing is sent upstream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { keyedAiBackend, keysSecret, llmGatewayYaml } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, streamFixture, type MockProvider } from './mock-provider.ts';

describe('Responses hosted tools and stored state on translated routes, with the openai SDK', () => {
  let anthropicUp: MockProvider;
  let geminiUp: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    [anthropicUp, geminiUp] = await Promise.all([startMockProvider(), startMockProvider()]);
    anthropicUp.answer('/v1/messages', (req) => (req.json().stream === true ? streamFixture('anthropic-web-search') : responseFixture('anthropic-web-search')));
    geminiUp.answer('/v1beta/models/', responseFixture('gemini-google-search'));
    gw = await startGateway(llmGatewayYaml([{ name: 'claude', prefix: '/claude' }, { name: 'gemini', prefix: '/gemini' }], [
      keysSecret({ anthropic: 'sk-ant', gemini: 'gm-key' }),
      keyedAiBackend('claude', 'providerD: { model: claude-sonnet-4-5 }', anthropicUp, 'anthropic'),
      keyedAiBackend('gemini', 'providerE: { model: gemini-2.5-flash }', geminiUp),
    ].join('---\n')));;
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([anthropicUp, geminiUp].map((m) => m?.stop()));
  });

  const client = (prefix: string) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });

  it('web_search to Anthropic: the server tool goes upstream, the searched answer comes back as output text', async () => {
    const res = await client('/claude').responses.create({
      model: 'any', input: 'What did the ECB decide this week?',
      tools: [{ type: 'web_search', user_location: { type: 'approximate', country: 'DE' } }],
    });
    const up = anthropicUp.requests.at(-1)!.json();
    assert.deepEqual(up.tools, [{ type: 'web_search_20250305', name: 'web_search', user_location: { type: 'approximate', country: 'DE' } }]);
    assert.match(res.output_text, /deposit facility rate stays at 2\.00%/);
    assert.equal(res.status, 'completed');
  });

  it('web_search to Anthropic, streamed: text deltas only, the server tool blocks stay upstream', async () => {
    const stream = await client('/claude').responses.create({ model: 'any', input: 'ECB?', tools: [{ type: 'web_search_preview' }], stream: true });
    let text = '';
    const types = new Set<string>();
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.add(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(text, "I'll look it up.Rates are unchanged; the deposit rate stays at 2.00%.");
    assert.ok(!types.has('response.function_call_arguments.delta'), 'the search query is not a function call');
    const final = completed?.output.flatMap((item) => (item.type === 'message' ? item.content : [])).map((part) => (part.type === 'output_text' ? part.text : '')).join('');
    assert.equal(final, text);
    assert.equal(anthropicUp.requests.at(-1)!.json().stream, true);
  });

  it('web_search to Gemini: googleSearch upstream, grounded answer as output text', async () => {
    const res = await client('/gemini').responses.create({ model: 'any', input: 'ECB?', tools: [{ type: 'web_search' }] });
    assert.deepEqual(geminiUp.requests.at(-1)!.json().tools, [{ googleSearch: {} }]);
    assert.match(res.output_text, /deposit facility rate stays at 2\.00%/);
  });

  const refused: { name: string; prefix: string; body: Record<string, unknown>; param: string; message: RegExp }[] = [
    { name: 'previous_response_id', prefix: '/claude', body: { previous_response_id: 'resp_abc' }, param: 'previous_response_id', message: /previous_response_id/ },
    { name: 'conversation', prefix: '/gemini', body: { conversation: 'conv_abc' }, param: 'conversation', message: /conversation/ },
    { name: 'file_search', prefix: '/claude', body: { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, param: 'tools', message: /tool type "file_search"/ },
    { name: 'code_interpreter', prefix: '/gemini', body: { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, param: 'tools', message: /tool type "code_interpreter"/ },
    { name: 'web_search with a domain filter on Gemini', prefix: '/gemini', body: { tools: [{ type: 'web_search', filters: { allowed_domains: ['ecb.europa.eu'] } }] }, param: 'tools', message: /allowed_domains/ },
  ];
  for (const c of refused) {
    it(`${c.name}: 400 the SDK reads, naming ${c.param}; nothing sent upstream`, async () => {
      const before = anthropicUp.requests.length + geminiUp.requests.length;
      const err = await client(c.prefix).responses.create({ model: 'any', input: 'again', ...c.body } as OpenAI.Responses.ResponseCreateParamsNonStreaming).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.equal(err.param, c.param);
      assert.match(err.message, c.message);
      assert.equal(anthropicUp.requests.length + geminiUp.requests.length, before);
    });
  }
});
