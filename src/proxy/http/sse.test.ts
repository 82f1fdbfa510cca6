import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { formatSSE, SSEEventTooLargeError, SSEParser, type SSEEvent } from './sse.ts';

function parseChunks(chunks: readonly Uint8Array[], maxEventChars?: number): SSEEvent[] {
  const p = new SSEParser(maxEventChars === undefined ? {} : { maxEventChars });
  const out: SSEEvent[] = [];
  for (const chunk of chunks) out.push(...p.push(chunk));
  out.push(...p.end());
  return out;
}

function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

function parseAll(text: string, size: number): SSEEvent[] {
  return parseChunks(split(Buffer.from(text), size));
}

describe('SSEParser', () => {
  const cases = [
    { name: 'LF', text: 'event: a\ndata: 1\n\ndata: 2\n\n', want: [{ event: 'a', data: '1' }, { data: '2' }] },
    { name: 'CRLF split anywhere', text: 'event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n', want: [{ event: 'a', data: '1' }, { data: '2' }] },
    { name: 'bare CR', text: 'data: x\r\rdata: y\r\r', want: [{ data: 'x' }, { data: 'y' }] },
    { name: 'mixed terminators', text: 'data: a\r\ndata: b\rdata: c\n\r\n', want: [{ data: 'a\nb\nc' }] },
    { name: 'multi-line data and comments', text: ': keep-alive\ndata: a\ndata: b\n\n', want: [{ data: 'a\nb' }] },
    { name: 'no space after colon', text: 'data:{"x":1}\n\n', want: [{ data: '{"x":1}' }] },
    { name: 'only the first space is dropped', text: 'data:  two\n\n', want: [{ data: ' two' }] },
    { name: 'field without colon', text: 'data\n\n', want: [{ data: '' }] },
    { name: 'id, retry and unknown fields ignored', text: 'id: 1\nretry: 5\nfoo: bar\ndata: x\n\n', want: [{ data: 'x' }] },
    { name: 'event without data is not dispatched', text: 'event: ping\n\ndata: x\n\n', want: [{ data: 'x' }] },
    { name: 'event name does not carry over', text: 'event: a\ndata: 1\n\ndata: 2\n\n', want: [{ event: 'a', data: '1' }, { data: '2' }] },
    { name: 'final event without blank line', text: 'data: last', want: [{ data: 'last' }] },
    { name: 'final line ending in CR', text: 'data: last\r', want: [{ data: 'last' }] },
    { name: 'leading BOM', text: '\uFEFFdata: x\n\n', want: [{ data: 'x' }] },
    { name: 'multi-byte UTF-8', text: 'data: h€llo ✓ 🎉\n\n', want: [{ data: 'h€llo ✓ 🎉' }] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      for (const size of [1, 2, 3, 7, 1000]) assert.deepEqual(parseAll(c.text, size), c.want, `chunk size ${size}`);
    });
  }

  it('a CR ending one chunk and the LF starting the next are one line break', () => {
    const chunks = [Buffer.from('data: a\r'), Buffer.from('\ndata: b\r'), Buffer.from('\n\r'), Buffer.from('\n')];
    assert.deepEqual(parseChunks(chunks), [{ data: 'a\nb' }]);
  });

  it('a CR ending one chunk, then an empty chunk, then the LF: still one line break', () => {
    const chunks = [Buffer.from('data: a\r'), new Uint8Array(0), Buffer.from('\n\n')];
    assert.deepEqual(parseChunks(chunks), [{ data: 'a' }]);
  });

  it('formatSSE round-trips through the parser', () => {
    assert.deepEqual(parseAll(formatSSE('a\nb', 'ev') + formatSSE('c'), 1), [{ event: 'ev', data: 'a\nb' }, { data: 'c' }]);
  });

  it('chunking never changes the events (1 byte, 7 bytes, whole, random cuts)', () => {
    const line = fc.oneof(
      fc.string().map((s) => `data: ${s}`),
      fc.string().map((s) => `event:${s}`),
      fc.string().map((s) => `:${s}`),
      fc.constantFrom('', 'data', 'id: 3', 'retry: 10'),
      fc.string({ unit: 'binary' }),
    );
    const terminator = fc.constantFrom('\n', '\r', '\r\n');
    const stream = fc.array(fc.tuple(line, terminator).map(([l, t]) => l + t), { maxLength: 30 }).map((parts) => Buffer.from(parts.join('')));
    fc.assert(fc.property(stream, fc.array(fc.nat(), { maxLength: 20 }), (bytes, cuts) => {
      const whole = parseChunks([bytes]);
      assert.deepEqual(parseChunks(split(bytes, 1)), whole);
      assert.deepEqual(parseChunks(split(bytes, 7)), whole);
      const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const random: Uint8Array[] = [];
      let from = 0;
      for (const p of points) { random.push(bytes.subarray(from, p)); from = p; }
      random.push(bytes.subarray(from));
      assert.deepEqual(parseChunks(random), whole);
    }), { numRuns: 300 });
  });

  describe('event size limit', () => {
    const rows = [
      { name: 'one unterminated line', text: `data: ${'x'.repeat(200)}` },
      { name: 'many data lines of one event', text: 'data: 0123456789\n'.repeat(20) },
      { name: 'a long event name', text: `event: ${'e'.repeat(200)}\n` },
      { name: 'an endless comment line', text: `: ${'c'.repeat(200)}` },
    ];
    for (const row of rows) {
      it(`${row.name} fails past the limit, for every chunking`, () => {
        for (const size of [1, 7, 10_000]) {
          assert.throws(() => parseChunks(split(Buffer.from(row.text), size), 100), (err: unknown) => err instanceof SSEEventTooLargeError && err.limit === 100, `chunk size ${size}`);
        }
      });
    }

    it('events up to the limit pass, and the limit is per event', () => {
      const event = `data: ${'x'.repeat(90)}\n\n`;
      assert.equal(parseChunks(split(Buffer.from(event.repeat(50)), 13), 100).length, 50);
    });

    it('after the error the parser ignores the rest of the stream', () => {
      const p = new SSEParser({ maxEventChars: 10 });
      assert.throws(() => p.push(Buffer.from('data: 0123456789abc')));
      assert.deepEqual(p.push(Buffer.from('\n\ndata: y\n\n')), []);
      assert.deepEqual(p.end(), []);
    });
  });

  it('is linear: a 32 MiB event in 1 KiB chunks is rejected in well under a second', () => {
    const p = new SSEParser();
    const chunk = Buffer.alloc(1024, 'x');
    const started = performance.now();
    let error: unknown;
    p.push(Buffer.from('data: '));
    try {
      for (let i = 0; i < 32 * 1024; i++) p.push(chunk);
    } catch (err) {
      error = err;
    }
    assert.ok(error instanceof SSEEventTooLargeError);
    assert.ok(performance.now() - started < 1000, `took ${Math.round(performance.now() - started)} ms`);
  });
});
