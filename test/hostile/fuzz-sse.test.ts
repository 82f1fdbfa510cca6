/**
 * fast-check properties over the SSE parser, through the same `fuzz()` the on-demand fuzzer runs
 * (fuzz/sse.fuzz.ts): random bytes, and streams built from SSE's pieces (fields, comments, every
 * line terminator, multi-byte characters, long lines). Chunking never changes the result, only the
 * documented error is thrown, and every call returns fast.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assertPrompt } from './fuzz-bound.ts';
import { fuzz } from '../../fuzz/sse.fuzz.ts';

function timed(data: Buffer): void {
  assertPrompt(() => fuzz(data), () => `${data.length} bytes`);
}

const piece = fc.oneof(
  fc.constantFrom('data:', 'data: ', 'data', 'event:', 'event: ', 'id: 1', 'retry: 9', ':', ': ping', '\n', '\r', '\r\n', '\n\n', '\r\r', '\uFEFF', '€', '🎉', ' ', '[DONE]', '{"a":1}'),
  fc.string({ maxLength: 12 }),
  fc.nat({ max: 120 }).map((n) => 'x'.repeat(n)),
);
const structured = fc.array(piece, { maxLength: 60 }).map((parts) => Buffer.from(parts.join('')));

describe('SSE parser fuzz properties', () => {
  it('random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => timed(Buffer.from(bytes))), { numRuns: 1_000 });
  });

  it('streams built from SSE pieces', () => {
    fc.assert(fc.property(structured, (bytes) => timed(bytes)), { numRuns: 1_500 });
  });

  it('a long unterminated event stays linear', () => {
    const long = Buffer.from(`data: ${'x'.repeat(200_000)}`);
    const t0 = performance.now();
    fuzz(long);
    assert.ok(performance.now() - t0 < 2_000, `${Math.round(performance.now() - t0)} ms`);
  });
});
