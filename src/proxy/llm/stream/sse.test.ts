import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatSSE, SSEParser } from './sse.ts';

function parseAll(text: string, size: number) {
  const p = new SSEParser();
  const bytes = Buffer.from(text);
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...p.push(bytes.subarray(i, i + size)));
  out.push(...p.end());
  return out;
}

describe('SSEParser', () => {
  const cases = [
    { name: 'LF', text: 'event: a\ndata: 1\n\ndata: 2\n\n', want: [{ event: 'a', data: '1' }, { data: '2' }] },
    { name: 'CRLF split anywhere', text: 'event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n', want: [{ event: 'a', data: '1' }, { data: '2' }] },
    { name: 'bare CR', text: 'data: x\r\rdata: y\r\r', want: [{ data: 'x' }, { data: 'y' }] },
    { name: 'multi-line data and comments', text: ': keep-alive\ndata: a\ndata: b\n\n', want: [{ data: 'a\nb' }] },
    { name: 'no space after colon', text: 'data:{"x":1}\n\n', want: [{ data: '{"x":1}' }] },
    { name: 'final event without blank line', text: 'data: last', want: [{ data: 'last' }] },
    { name: 'multi-byte UTF-8', text: 'data: h€llo ✓ 🎉\n\n', want: [{ data: 'h€llo ✓ 🎉' }] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      for (const size of [1, 2, 3, 7, 1000]) assert.deepEqual(parseAll(c.text, size), c.want, `chunk size ${size}`);
    });
  }

  it('formatSSE round-trips through the parser', () => {
    assert.deepEqual(parseAll(formatSSE('a\nb', 'ev') + formatSSE('c'), 1), [{ event: 'ev', data: 'a\nb' }, { data: 'c' }]);
  });
});
