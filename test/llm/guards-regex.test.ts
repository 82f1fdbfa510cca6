/**
 * Prompt guards (`ai.promptGuard`, docs/llm.md "Prompt guards") with the `regex` kind, through a
 * listening gateway with the official openai and Anthropic SDKs against a local OpenAI-format
 * provider: request guards before any provider is called (Reject never reaches it, Mask sends the
 * masked text), response guards on buffered answers (mask, reject in the client's error format),
 * and with `streaming: Enabled` on streamed answers (a rejection ends the stream with an error
 * event the SDK raises; text before it arrives, the rejected text never does).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { ROUTES, llmGatewayYaml } from './gateway-yaml.ts';
import { startMockProvider, type Answer, type MockProvider, type RecordedRequest } from './mock-provider.ts';

const SSN = '123-45-6789';

/** The provider's answer text, chosen by what the client asked, so one mock serves every case. */
function answerText(req: RecordedRequest): string[] {
  const asked = JSON.stringify(req.json().messages ?? req.json().input ?? '');
  if (asked.includes('tell-ssn')) return ['Sure, the number ', 'is 123-', '45-6789', ' as asked.'];
  if (asked.includes('tell-email')) return ['Write to ', 'bob@example.com', ' today.'];
  return ['Hello ', 'there.'];
}

/** The provider's OpenAI Responses API answer (providerA serves Responses clients on its own /v1/responses). */
function responsesAnswer(req: RecordedRequest): Answer {
  const pieces = answerText(req);
  const text = pieces.join('');
  const message = (t: string) => ({ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: t, annotations: [] }] });
  const response = (status: string, output: unknown[]) => ({ id: 'resp_1', object: 'response', created_at: 1, model: 'gpt-4o', status, output, usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 } });
  if (req.json().stream !== true) return { body: response('completed', [message(text)]) };
  let seq = 0;
  const ev = (type: string, body: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...body })}\n\n`;
  return { sse: [
    ev('response.created', { response: response('in_progress', []) }),
    ev('response.output_item.added', { output_index: 0, item: { ...message(''), status: 'in_progress', content: [] } }),
    ev('response.content_part.added', { output_index: 0, item_id: 'msg_1', content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    ...pieces.map((p) => ev('response.output_text.delta', { output_index: 0, item_id: 'msg_1', content_index: 0, delta: p })),
    ev('response.completed', { response: response('completed', [message(text)]) }),
  ].join('') };
}

function chatAnswer(req: RecordedRequest): Answer {
  if (req.path.includes('/responses')) return responsesAnswer(req);
  const pieces = answerText(req);
  if (req.json().stream !== true) {
    return { body: {
      id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    } };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return { sse: chunk({ role: 'assistant', content: '' }, null) + pieces.map((p) => chunk({ content: p }, null)).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n' };
}

describe('prompt guards, regex kind (official openai and Anthropic SDKs)', () => {
  let up: MockProvider;
  let gw: GatewayHarness;

  const backend = (name: string, guard: string) => `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { providerA: {}, host: ${up.host}, port: ${up.port} }
  policies:
    ai:
      routes: ${ROUTES}
      promptGuard:
${guard.split('\n').map((l) => `        ${l}`).join('\n')}
`;

  before(async () => {
    up = await startMockProvider();
    up.answer('/', chatAnswer);
    const names = ['reject', 'mask', 'answers', 'streamed', 'chained'];
    gw = await startGateway(llmGatewayYaml(names.map((n) => ({ name: n, prefix: `/${n}` })), [
      backend('reject', `request:
  - regex: { builtins: [Ssn], action: Reject }
    response: { statusCode: 422, message: "no SSNs please" }`),
      backend('mask', `request:
  - regex: { builtins: [Email] }`),
      backend('answers', `response:
  - regex: { builtins: [Email] }
  - regex: { builtins: [Ssn], action: Reject }
    response: { message: "the answer held an SSN" }`),
      backend('streamed', `streaming: Enabled
response:
  - regex: { builtins: [Ssn], action: Reject }
    response: { message: "the answer held an SSN" }
  - regex: { builtins: [Email] }`),
      backend('chained', `request:
  - regex: { matches: ["tell-[a-z]+"] }
  - regex: { matches: ["MASKED"], action: Reject }`),
    ].join('---\n')));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await up?.stop();
  });

  const openai = (prefix: string) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });
  const anthropic = (prefix: string) => new Anthropic({ apiKey: 'client-key', baseURL: gw.url(80, prefix), maxRetries: 0 });

  it('a Reject request guard on Ssn answers the guard\'s response in OpenAI\'s format; the provider never sees the request', async () => {
    const seen = up.requests.length;
    await assert.rejects(
      openai('/reject').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: `my ssn is ${SSN}` }] }),
      (err: InstanceType<typeof OpenAI.APIError>) => {
        assert.equal(err.status, 422);
        assert.equal(err.message.includes('no SSNs please'), true, err.message);
        assert.equal(err.code, 'guard_rejected');
        return true;
      },
    );
    assert.equal(up.requests.length, seen, 'nothing reached the provider');
  });

  it('the same guard answers an Anthropic client in Anthropic\'s error format, and sees tool results', async () => {
    const seen = up.requests.length;
    await assert.rejects(
      anthropic('/reject').messages.create({
        model: 'gpt-4o', max_tokens: 50,
        messages: [
          { role: 'user', content: 'look it up' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: `found ${SSN}` }] }] },
        ],
      }),
      (err: InstanceType<typeof Anthropic.APIError>) => {
        assert.equal(err.status, 422);
        assert.deepEqual((err.error as { type: string; error: { message: string } }).error.message, 'no SSNs please');
        return true;
      },
    );
    assert.equal(up.requests.length, seen);
  });

  it('embeddings input is guarded too (a string list): the SSN never reaches the provider', async () => {
    const seen = up.requests.length;
    await assert.rejects(openai('/reject').embeddings.create({ model: 'text-embedding-3-small', input: ['fine', `ssn ${SSN}`] }), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 422 && err.code === 'guard_rejected');
    assert.equal(up.requests.length, seen);
  });

  it('text without an SSN passes, and order numbers that fail nothing pass', async () => {
    const r = await openai('/reject').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'order 4111111111111112 and 000-12-3456' }] });
    assert.equal(r.choices[0]?.message.content, 'Hello there.');
  });

  it('a Mask request guard on Email sends the address masked (Completions and Responses)', async () => {
    await openai('/mask').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'mail jane@example.org please' }] }] });
    const sent = up.requests.at(-1)?.json().messages as { content: unknown }[];
    assert.equal(JSON.stringify(sent).includes('jane@example.org'), false);
    assert.equal(JSON.stringify(sent).includes('mail <EMAIL> please'), true, JSON.stringify(sent));
    await openai('/mask').responses.create({ model: 'gpt-4o', instructions: 'reply to ops@example.net', input: 'cc jane@example.org' });
    const body = JSON.stringify(up.requests.at(-1)?.json());
    assert.equal(/example\.(org|net)/.test(body), false, body);
    assert.equal((body.match(/<EMAIL>/g) ?? []).length, 2, body);
  });

  it('guards run in order on what the previous one left: a mask can make a later guard reject', async () => {
    const seen = up.requests.length;
    await assert.rejects(openai('/chained').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'tell-me' }] }), (err: InstanceType<typeof OpenAI.APIError>) => err.status === 403);
    assert.equal(up.requests.length, seen);
  });

  it('a response guard masks a buffered answer (OpenAI and Anthropic clients)', async () => {
    const r = await openai('/answers').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'tell-email' }] });
    assert.equal(r.choices[0]?.message.content, 'Write to <EMAIL> today.');
    const m = await anthropic('/answers').messages.create({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'tell-email' }] });
    assert.deepEqual(m.content.map((b) => (b.type === 'text' ? b.text : '')), ['Write to <EMAIL> today.']);
  });

  it('a response guard masks a buffered Responses answer', async () => {
    const r = await openai('/answers').responses.create({ model: 'gpt-4o', input: 'tell-email' });
    assert.equal(r.output_text, 'Write to <EMAIL> today.');
  });

  it('a Reject response guard answers the guard\'s response instead of the answer, in the client\'s format', async () => {
    await assert.rejects(openai('/answers').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'tell-ssn' }] }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 403);
      assert.equal(err.code, 'guard_rejected');
      assert.match(err.message, /the answer held an SSN/);
      return true;
    });
    await assert.rejects(anthropic('/answers').messages.create({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'tell-ssn' }] }), (err: InstanceType<typeof Anthropic.APIError>) => {
      assert.equal(err.status, 403);
      assert.equal((err.error as { error: { type: string } }).error.type, 'permission_error');
      return true;
    });
  });

  it('without streaming: Enabled a streamed answer is not guarded', async () => {
    const stream = await openai('/answers').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'tell-ssn' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text.includes(SSN), true);
  });

  it('streaming: Enabled — a Reject ends an OpenAI stream with an error event; the SSN never reaches the client', async () => {
    const stream = await openai('/streamed').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'tell-ssn' }] });
    let text = '';
    await assert.rejects((async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })(), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.match(err.message, /the answer held an SSN/);
      return true;
    });
    assert.equal(text.startsWith('Sure, the number is 123-'), true, text);
    assert.equal(text.includes('6789'), false, text);
  });

  it('streaming: Enabled — the same on an Anthropic stream and a Responses stream', async () => {
    let text = '';
    await assert.rejects((async () => {
      const stream = anthropic('/streamed').messages.stream({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'tell-ssn' }] });
      for await (const ev of stream) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    })(), /the answer held an SSN/);
    assert.equal(text.includes('6789'), false, text);
    let responsesText = '';
    await assert.rejects((async () => {
      const stream = await openai('/streamed').responses.create({ model: 'gpt-4o', stream: true, input: 'tell-ssn' });
      for await (const ev of stream) if (ev.type === 'response.output_text.delta') responsesText += ev.delta;
    })(), /the answer held an SSN/);
    assert.equal(responsesText.includes('6789'), false, responsesText);
  });

  it('streaming: Enabled — Mask is not applied to a stream, and clean streams finish', async () => {
    const stream = await openai('/streamed').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'tell-email' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Write to bob@example.com today.');
  });
});
