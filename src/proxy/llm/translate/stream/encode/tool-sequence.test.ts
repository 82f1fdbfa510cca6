import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StreamEvent } from '../../canonical.ts';
import { clientEncoder, upstreamDecoder } from '../../codecs.ts';
import { deterministicContext } from '../../context.ts';
import { ToolNameMap } from '../../convert/tool-names.ts';
import { TranslatingStream } from '../translator.ts';
import { ToolCallSequencer } from './tool-sequence.ts';

type Ev = Exclude<StreamEvent, { type: 'usage' }>;
const start = (key: number): Ev => ({ type: 'tool_call_start', key, id: `call_${key}`, name: 'f' });
const args = (key: number, delta: string): Ev => ({ type: 'tool_call_args', key, delta });
const finish: Ev = { type: 'finish', reason: 'tool_calls' };

function run(events: Ev[], end = true): Ev[] {
  const s = new ToolCallSequencer();
  const out = events.flatMap((e) => s.push(e));
  return end ? [...out, ...s.release()] : out;
}

describe('ToolCallSequencer', () => {
  const rows: { name: string; in: Ev[]; want: Ev[] }[] = [
    { name: 'one call streams through untouched', in: [start(0), args(0, '{"a"'), args(0, ':1}'), finish], want: [start(0), args(0, '{"a"'), args(0, ':1}'), finish] },
    {
      name: 'calls in turn: the second is held and released whole before the finish',
      in: [start(0), args(0, '{}'), start(1), args(1, '{"b"'), args(1, ':2}'), finish],
      want: [start(0), args(0, '{}'), start(1), args(1, '{"b":2}'), finish],
    },
    {
      name: 'interleaved calls: every delta reaches its own call',
      in: [start(0), start(1), args(0, '{"a"'), args(1, '{"b"'), args(0, ':1}'), args(1, ':2}'), finish],
      want: [start(0), args(0, '{"a"'), args(0, ':1}'), start(1), args(1, '{"b":2}'), finish],
    },
    {
      name: 'three calls, the held ones released in the order they started',
      in: [start(0), start(2), start(1), args(1, '1'), args(2, '2'), args(0, '0'), finish],
      want: [start(0), args(0, '0'), start(2), args(2, '2'), start(1), args(1, '1'), finish],
    },
    {
      name: 'text after the calls releases the held ones first',
      in: [start(0), start(1), args(1, '{}'), { type: 'text', text: 'done' }],
      want: [start(0), start(1), args(1, '{}'), { type: 'text', text: 'done' }],
    },
    { name: 'the stream ends without a finish: held calls still come out', in: [start(0), start(1), args(1, '{}')], want: [start(0), start(1), args(1, '{}')] },
    { name: 'an error drops what was held', in: [start(0), start(1), args(1, '{'), { type: 'error', status: 500, errorType: 'api_error', message: 'cut' }], want: [start(0), { type: 'error', status: 500, errorType: 'api_error', message: 'cut' }] },
  ];
  for (const row of rows) it(row.name, () => assert.deepEqual(run(row.in), row.want));
});

/** An OpenAI-compatible upstream streaming two calls with their argument deltas interleaved. */
const INTERLEAVED = [
  { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }, { index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '' } }] },
  { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
  { tool_calls: [{ index: 1, function: { arguments: '{"zone":' } }] },
  { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
  { tool_calls: [{ index: 1, function: { arguments: '"CET"}' } }] },
].map((delta) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`).join('')
  + `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\ndata: [DONE]\n\n`;

function translate(client: 'messages' | 'responses'): { event: string; data: Record<string, unknown> }[] {
  const ctx = deterministicContext();
  const stream = new TranslatingStream(upstreamDecoder('chat', new ToolNameMap(), ctx), clientEncoder(client, { model: 'm', system: [], messages: [], stream: true }, false, ctx));
  const text = [...stream.push(Buffer.from(INTERLEAVED)), ...stream.end()].map((b) => Buffer.from(b).toString()).join('');
  return text.split('\n\n').filter(Boolean).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
    return { event, data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Record<string, unknown> };
  });
}

describe('interleaved tool calls from an OpenAI-style upstream', () => {
  it('reach an Anthropic client as two sequential tool_use blocks with complete input', () => {
    const events = translate('messages');
    const inputs = new Map<number, string>();
    let open: number | undefined;
    for (const { data } of events) {
      if (data.type === 'content_block_start') {
        assert.equal(open, undefined, 'a block started before the previous one stopped');
        open = data.index as number;
        inputs.set(open, '');
      }
      if (data.type === 'content_block_delta') {
        assert.equal(data.index, open, 'a delta for a block that is not the open one');
        inputs.set(open as number, inputs.get(open as number) + ((data.delta as { partial_json: string }).partial_json ?? ''));
      }
      if (data.type === 'content_block_stop') open = undefined;
    }
    assert.deepEqual([...inputs.values()].map((s) => JSON.parse(s)), [{ city: 'Paris' }, { zone: 'CET' }]);
  });

  it('reach a Responses client as two function_call items with complete arguments', () => {
    const done = translate('responses').filter((e) => e.event === 'response.function_call_arguments.done').map((e) => JSON.parse(e.data.arguments as string));
    assert.deepEqual(done, [{ city: 'Paris' }, { zone: 'CET' }]);
  });
});
