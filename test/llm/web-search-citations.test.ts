/**
 * Provider web search with its sources, end to end through a listening gateway: Anthropic's
 * web_search server tool and Gemini's Google Search grounding reach openai SDK clients as
 * url_citation annotations (character offsets, checked on non-ASCII text) and, for Responses,
 * web_search_call items — buffered and streamed; Anthropic SDK clients on Gemini get plain text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { keyedAiBackend, keysSecret, llmGatewayYaml } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, streamFixture, type MockProvider } from './mock-provider.ts';

const ECB = 'https://www.ecb.europa.eu/press/pr/date/2026/html/ecb.mp261119.en.html';
const GROUNDED = 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE';

describe('web search citations on translated routes (official SDKs through the gateway)', () => {
  let anthropicUp: MockProvider;
  let geminiUp: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    [anthropicUp, geminiUp] = await Promise.all([startMockProvider(), startMockProvider()]);
    anthropicUp.answer('/v1/messages', (req) => (req.json().stream === true ? streamFixture('anthropic-web-search') : responseFixture('anthropic-web-search')));
    geminiUp.answer('/v1beta/models/', (req) => (req.path.includes(':streamGenerateContent') ? streamFixture('gemini-grounding-unicode') : responseFixture('gemini-grounding-unicode')));
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

  const openai = (prefix: string) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });
  const question = 'What did the ECB decide this week?';

  it('chat with web_search_options on Anthropic: the web search tool upstream, annotations over the joined content', async () => {
    const res = await openai('/claude').chat.completions.create({ model: 'any', messages: [{ role: 'user', content: question }], web_search_options: {} });
    assert.deepEqual((anthropicUp.requests.at(-1)!.json().tools as unknown[]).length, 1);
    const m = res.choices[0].message;
    assert.equal(m.content, "I'll look up this week's decision.\n\nThe ECB kept its three key interest rates unchanged; the deposit facility rate stays at 2.00%.");
    const [a] = m.annotations ?? [];
    assert.equal(a.url_citation.url, ECB);
    assert.equal(m.content?.slice(a.url_citation.start_index, a.url_citation.end_index), 'The ECB kept its three key interest rates unchanged; the deposit facility rate stays at 2.00%.');
  });

  it('chat on Gemini, streamed: delta.annotations index characters of the streamed content (umlauts, emoji)', async () => {
    const stream = await openai('/gemini').chat.completions.create({ model: 'any', messages: [{ role: 'user', content: question }], web_search_options: {}, stream: true });
    let content = '';
    const spans: string[] = [];
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) content += chunk.choices[0]?.delta.content ?? '';
    const chars = [...content];
    for (const chunk of chunks) {
      const delta = chunk.choices[0]?.delta as { annotations?: OpenAI.Chat.ChatCompletionMessage.Annotation[] } | undefined;
      for (const a of delta?.annotations ?? []) spans.push(chars.slice(a.url_citation.start_index, a.url_citation.end_index).join(''));
    }
    assert.deepEqual(geminiUp.requests.at(-1)!.json().tools, [{ googleSearch: {} }]);
    assert.deepEqual(spans, ['Die EZB ließ die Leitzinsen unverändert 🏦', 'der Einlagesatz bleibt bei 2,00 %', 'der Einlagesatz bleibt bei 2,00 %']);
  });

  it('Responses on Gemini: a web_search_call item with the query, then the grounded message with annotations', async () => {
    const res = await openai('/gemini').responses.create({ model: 'any', input: question, tools: [{ type: 'web_search' }] });
    const [search, message] = res.output;
    assert.equal(search.type, 'web_search_call');
    assert.equal(search.status, 'completed');
    assert.deepEqual(search.action, { type: 'search', query: 'EZB Zinsentscheidung November 2026' });
    assert.equal(message.type, 'message');
    const part = message.content[0];
    assert.equal(part.type, 'output_text');
    const chars = [...part.text];
    assert.deepEqual(part.annotations.map((a) => (a.type === 'url_citation' ? `${a.url.slice(GROUNDED.length)}:${chars.slice(a.start_index, a.end_index).join('')}` : a.type)), [
      '1:Die EZB ließ die Leitzinsen unverändert 🏦', '1:der Einlagesatz bleibt bei 2,00 %', '2:der Einlagesatz bleibt bei 2,00 %',
    ]);
  });

  it('Responses on Anthropic, streamed: web search item events in order, annotation.added, and the same final response', async () => {
    const stream = openai('/claude').responses.stream({ model: 'any', input: question, tools: [{ type: 'web_search' }] });
    const types: string[] = [];
    const added: unknown[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.annotation.added') added.push(event.annotation);
    }
    const final = await stream.finalResponse();
    const searchEvents = types.filter((t) => t.startsWith('response.web_search_call.'));
    assert.deepEqual(searchEvents, ['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed']);
    assert.deepEqual(final.output.map((i) => i.type), ['message', 'web_search_call', 'message']);
    const last = final.output[2];
    assert.ok(last.type === 'message' && last.content[0].type === 'output_text');
    assert.deepEqual(last.content[0].annotations, added);
    assert.deepEqual(added, [{ type: 'url_citation', start_index: 0, end_index: 53, title: 'Monetary policy decisions', url: ECB }]);
  });

  it('Anthropic SDK with the web search tool on Gemini: Google Search upstream, the answer as plain text blocks', async () => {
    const anthropic = new Anthropic({ apiKey: 'client-key', baseURL: gw.url(80, '/gemini'), maxRetries: 0 });
    const msg = await anthropic.messages.create({
      model: 'any', max_tokens: 1024, messages: [{ role: 'user', content: question }],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
    });
    assert.deepEqual(geminiUp.requests.at(-1)!.json().tools, [{ googleSearch: {} }]);
    assert.deepEqual(msg.content.map((b) => b.type), ['text']);
    const [block] = msg.content;
    assert.ok(block.type === 'text' && block.text.startsWith('Die EZB'));
    assert.equal(block.citations ?? null, null, 'no made-up web_search_result_location (it would need Anthropic\'s encrypted_index)');
  });
});
