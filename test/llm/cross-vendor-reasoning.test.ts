/**
 * Signed reasoning across vendors, end to end: the Anthropic SDK with thinking and tools talks to
 * a gateway in front of a Gemini mock and an Anthropic mock. Each mock checks the signatures in
 * the history it receives the way its vendor does (only its own, or Gemini's documented
 * placeholder) and answers 400 otherwise, so a second turn that carried a foreign or still-marked
 * signature would fail here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { keyedAiBackend, keysSecret, llmGatewayYaml } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, streamFixture, type Answer, type MockProvider, type RecordedRequest } from './mock-provider.ts';

const GEMINI_SIGNATURE = 'CiQBsigGem=='; // issued by streams/gemini-thought-tools
const ANTHROPIC_SIGNATURE = 'EqQBsig=='; // issued by streams/anthropic-thinking-tool
const GEMINI_PLACEHOLDER = 'skip_thought_signature_validator';

type GeminiBody = { contents: { role: string; parts: { thoughtSignature?: string; functionCall?: unknown }[] }[] };
type MessagesBody = { messages: { role: string; content: string | { type: string; signature?: string }[] }[] };

/** Gemini accepts its own signatures and the placeholder; anything else fails the request. */
function geminiVerdict(req: RecordedRequest, ok: Answer): Answer {
  const body = req.json() as unknown as GeminiBody;
  for (const c of body.contents) {
    for (const p of c.parts) {
      if (p.thoughtSignature !== undefined && p.thoughtSignature !== GEMINI_SIGNATURE && p.thoughtSignature !== GEMINI_PLACEHOLDER) {
        return { status: 400, body: { error: { code: 400, message: 'Thought signature is not valid.', status: 'INVALID_ARGUMENT' } } };
      }
    }
  }
  return ok;
}

/** Anthropic accepts only signatures it issued. */
function anthropicVerdict(req: RecordedRequest, ok: Answer): Answer {
  const body = req.json() as unknown as MessagesBody;
  for (const m of body.messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) {
      if (b.type === 'thinking' && b.signature !== ANTHROPIC_SIGNATURE) {
        return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.1.content.0: Invalid `signature` in `thinking` block' } } };
      }
    }
  }
  return ok;
}

describe('signed reasoning across vendors through the gateway (Anthropic SDK)', () => {
  let gemini: MockProvider;
  let anthropicUp: MockProvider;
  let gw: GatewayHarness;
  const tools = [{ name: 'get.weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } }];
  const question = { role: 'user' as const, content: 'What is the weather in Tokyo?' };

  before(async () => {
    [gemini, anthropicUp] = await Promise.all([startMockProvider(), startMockProvider()]);
    gemini.answer('/v1beta/models/', (req) => geminiVerdict(req, req.path.includes('stream') ? streamFixture('gemini-thought-tools') : responseFixture('gemini-google-search')));
    anthropicUp.answer('/v1/messages', (req) => anthropicVerdict(req, streamFixture('anthropic-thinking-tool')));
    gw = await startGateway(llmGatewayYaml([{ name: 'gemini', prefix: '/gemini' }, { name: 'anthropic', prefix: '/anthropic' }], [
      keysSecret({ gemini: 'gm-key', anthropic: 'sk-ant' }),
      keyedAiBackend('gemini', 'providerE: { model: gemini-2.5-flash }', gemini),
      keyedAiBackend('anthropic', 'providerD: {}', anthropicUp),
    ].join('---\n')));;
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([gemini, anthropicUp].map((m) => m?.stop()));
  });

  const client = (prefix: string) => new Anthropic({ apiKey: 'client-key', baseURL: gw.url(80, prefix), maxRetries: 0 });
  const thinking = { type: 'enabled' as const, budget_tokens: 2048 };

  /** The history of the second turn: the first answer and a result for its tool call. */
  function secondTurn(first: Anthropic.Message): Anthropic.MessageParam[] {
    const call = first.content.find((b) => b.type === 'tool_use');
    assert.ok(call, 'the first answer calls the tool');
    return [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }] }];
  }

  it('Gemini → Anthropic client → Gemini: the marked signature comes back unwrapped on the function call', async () => {
    const first = await client('/gemini').messages.stream({ model: 'm', max_tokens: 4096, thinking, tools, messages: [question] }).finalMessage();
    const signatures = first.content.flatMap((b) => (b.type === 'thinking' && b.signature ? [b.signature] : []));
    assert.deepEqual(signatures, [`sb:g:${GEMINI_SIGNATURE}`], 'the client holds the signature with its family mark');

    const second = await client('/gemini').messages.create({ model: 'm', max_tokens: 4096, thinking, tools, messages: secondTurn(first) });
    assert.equal(second.type, 'message');
    const body = gemini.requests.at(-1)!.json() as unknown as GeminiBody;
    const call = body.contents.flatMap((c) => c.parts).find((p) => p.functionCall);
    assert.equal(call?.thoughtSignature, GEMINI_SIGNATURE);
  });

  it('Anthropic (native route) → Anthropic client → Gemini: the Claude signature is left out, the call gets the placeholder', async () => {
    const first = await client('/anthropic').messages.stream({ model: 'm', max_tokens: 4096, thinking, tools, messages: [question] }).finalMessage();
    const signatures = first.content.flatMap((b) => (b.type === 'thinking' ? [b.signature] : []));
    assert.deepEqual(signatures, [ANTHROPIC_SIGNATURE], 'a native route hands over the vendor bytes untouched');

    const second = await client('/gemini').messages.create({ model: 'm', max_tokens: 4096, thinking, tools, messages: secondTurn(first) });
    assert.equal(second.type, 'message');
    const sent = gemini.requests.at(-1)!;
    assert.ok(!sent.body.toString().includes(ANTHROPIC_SIGNATURE), 'no Anthropic signature reaches Gemini');
    const call = (sent.json() as unknown as GeminiBody).contents.flatMap((c) => c.parts).find((p) => p.functionCall);
    assert.equal(call?.thoughtSignature, GEMINI_PLACEHOLDER);
  });

  it('the mocks do reject a foreign signature (the checks can fail)', async () => {
    const history: Anthropic.MessageParam[] = [question, { role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 'forged==' }, { type: 'text', text: 'hi' }] }, { role: 'user', content: 'and now?' }];
    await assert.rejects(client('/anthropic').messages.create({ model: 'm', max_tokens: 4096, thinking, messages: history }), (e: Error & { status?: number }) => e.status === 400 && /signature/.test(e.message));
    assert.equal(geminiVerdict({ json: () => ({ contents: [{ role: 'model', parts: [{ text: 'a', thoughtSignature: 'forged==' }] }] }) } as unknown as RecordedRequest, {}).status, 400);
  });
});
