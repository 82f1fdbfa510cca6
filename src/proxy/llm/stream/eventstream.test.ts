import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeEventStreamMessage, EventStreamParser } from './eventstream.ts';

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
});
