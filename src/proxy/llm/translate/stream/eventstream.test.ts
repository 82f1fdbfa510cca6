import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeEventStreamMessage, EventStreamFrameTooLargeError, EventStreamParser, MAX_EVENTSTREAM_FRAME_BYTES } from './eventstream.ts';

describe('EventStreamParser', () => {
  const frames = Buffer.concat([
    encodeEventStreamMessage('messageStart', { role: 'assistant' }),
    encodeEventStreamMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hé' } }),
  ]);

  it('decodes frames split at every byte', () => {
    const p = new EventStreamParser();
    const got = [];
    for (let i = 0; i < frames.length; i++) got.push(...p.push(frames.subarray(i, i + 1)));
    assert.deepEqual(got.map((m) => [m.headers[':event-type'], JSON.parse(Buffer.from(m.payload).toString())]), [
      ['messageStart', { role: 'assistant' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hé' } }],
    ]);
    assert.equal(p.pendingBytes, 0);
  });

  it('keeps a partial frame pending', () => {
    const p = new EventStreamParser();
    assert.equal(p.push(frames.subarray(0, 20)).length, 0);
    assert.equal(p.pendingBytes, 20);
  });

  it('rejects a corrupt frame (CRC check)', () => {
    const bad = Buffer.from(frames);
    bad[bad.length - 10] ^= 0xff;
    assert.throws(() => new EventStreamParser().push(bad));
  });

  it('any chunking gives the same frames', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: frames.length }), { minLength: 1, maxLength: 20 }), (sizes) => {
      const p = new EventStreamParser();
      const got = [];
      let at = 0;
      for (let i = 0; at < frames.length; i++) {
        const size = sizes[i % sizes.length]!;
        got.push(...p.push(frames.subarray(at, at + size)));
        at += size;
      }
      assert.equal(got.length, 2);
      assert.equal(p.pendingBytes, 0);
    }), { numRuns: 200 });
  });

  it('rejects a frame announcing more than the limit before buffering it', () => {
    const prelude = Buffer.alloc(4);
    prelude.writeUInt32BE(MAX_EVENTSTREAM_FRAME_BYTES + 1);
    const p = new EventStreamParser();
    assert.throws(() => p.push(prelude.subarray(0, 2)) && p.push(prelude.subarray(2)), EventStreamFrameTooLargeError);
    assert.deepEqual(p.push(frames), [], 'input after the error is ignored');
  });

  it('rejects a frame length below the minimum', () => {
    assert.throws(() => new EventStreamParser().push(Buffer.from([0, 0, 0, 3, 1, 2, 3])));
  });

  it('is linear: a 16 MiB frame in 1 KiB chunks is assembled quickly', () => {
    const big = Buffer.from(encodeEventStreamMessage('contentBlockDelta', { delta: { text: 'x'.repeat(16 * 1024 * 1024 - 1024) } }));
    const p = new EventStreamParser();
    const started = performance.now();
    const got = [];
    for (let i = 0; i < big.length; i += 1024) got.push(...p.push(big.subarray(i, i + 1024)));
    assert.equal(got.length, 1);
    assert.ok(performance.now() - started < 1500, `took ${Math.round(performance.now() - started)} ms`);
  });
});
