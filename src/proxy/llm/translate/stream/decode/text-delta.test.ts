import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StreamEvent } from '../../canonical.ts';
import { MessagesStreamDecoder } from './messages.ts';
import { anthropicTextDelta } from './text-delta.ts';

const delta = (text: unknown, index: unknown = 0) => JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });

describe('anthropicTextDelta', () => {
  const taken: { name: string; data: string; text: string }[] = [
    { name: 'plain text', data: delta('Hello'), text: 'Hello' },
    { name: 'empty text', data: delta(''), text: '' },
    { name: 'escapes, quotes, braces and newlines in the text', data: delta('a "b" \\ }} {"x":1}\n\t\u0001'), text: 'a "b" \\ }} {"x":1}\n\t\u0001' },
    { name: 'unicode escapes and astral characters', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u00e9\\ud83d\\ude00 😀"}}', text: 'é😀 😀' },
    { name: 'a multi-digit index', data: delta('x', 12), text: 'x' },
  ];
  for (const row of taken) {
    it(`takes: ${row.name}`, () => {
      assert.equal(anthropicTextDelta(row.data), row.text);
      assert.equal((JSON.parse(row.data) as { delta: { text: string } }).delta.text, row.text);
    });
  }

  const declined: { name: string; data: string }[] = [
    { name: 'another delta type', data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'x' } }) },
    { name: 'more fields after the text', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","extra":"b"}}' },
    { name: 'fields after the delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"x":{"y":"b"}}' },
    { name: 'spaces after colons', data: '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}' },
    { name: 'a text that is not a string', data: delta(123) },
    { name: 'a null text', data: delta(null) },
    { name: 'an index with a leading zero (not JSON)', data: '{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"a"}}' },
    { name: 'no index digits (not JSON)', data: '{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"a"}}' },
    { name: 'a negative index', data: delta('a', -1) },
    { name: 'a broken string literal', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\"}}' },
    { name: 'an unescaped quote inside', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"b"}}' },
    { name: 'a raw control character (not JSON)', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u0001"}}' },
    { name: 'cut short', data: delta('abc').slice(0, -1) },
    { name: 'another ending than the two braces (not JSON)', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"]]' },
    { name: 'message_stop', data: '{"type":"message_stop"}' },
  ];
  for (const row of declined) it(`declines: ${row.name}`, () => assert.equal(anthropicTextDelta(row.data), undefined));
});

/** The decoder with its quick path gives the events the full parse gives, for every row above and more. */
describe('MessagesStreamDecoder: quick text deltas decode as the full parse does', () => {
  class FullParse extends MessagesStreamDecoder {
    protected override quick(): StreamEvent | undefined {
      return undefined;
    }
  }
  const datas = [
    delta('Hello'), delta(''), delta('a "b" \\ }}\n'), delta('x', 3),
    '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "spaced"}}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"b"}}',
    '{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"a"}}',
  ];
  it('a compact text delta skips the parse and handle; a spaced one takes them', () => {
    let handled = 0;
    class Counting extends MessagesStreamDecoder {
      protected override handle(event: string | undefined, data: unknown): StreamEvent[] {
        handled++;
        return super.handle(event, data);
      }
    }
    const d = new Counting();
    assert.deepEqual(d.push(Buffer.from(`data: ${datas[0]}\n\ndata: ${datas[4]}\n\n`)), [{ type: 'text', text: 'Hello' }, { type: 'text', text: 'spaced' }]);
    assert.equal(handled, 1);
  });
  for (const data of datas) {
    it(data, () => {
      const stream = Buffer.from(`event: content_block_delta\ndata: ${data}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`);
      const run = (d: MessagesStreamDecoder) => [...d.push(stream), ...d.end()];
      assert.deepEqual(run(new MessagesStreamDecoder()), run(new FullParse()));
    });
  }
});
