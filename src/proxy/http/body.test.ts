import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { BodyTooLargeError, readBodyBounded, readBodyPrefix, readTextBounded } from './body.ts';

/** A source that counts how many chunks were pulled from it and whether it was destroyed. */
function counted(chunks: readonly (Uint8Array | string)[]) {
  const state = { pulled: 0, destroyed: false };
  const stream = Readable.from((function* () {
    for (const c of chunks) {
      state.pulled++;
      yield c;
    }
  })(), { objectMode: true });
  stream.on('close', () => { state.destroyed = true; });
  return { stream, state };
}

describe('readBodyBounded', () => {
  const rows = [
    { name: 'empty', chunks: [], max: 10, want: '' },
    { name: 'one chunk', chunks: ['hello'], max: 10, want: 'hello' },
    { name: 'many chunks, exactly the cap', chunks: ['ab', Buffer.from('cd'), new Uint8Array([101])], max: 5, want: 'abcde' },
    { name: 'multi-byte text', chunks: [Buffer.from('h€').subarray(0, 2), Buffer.from('h€').subarray(2)], max: 10, want: 'h€' },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      assert.equal(await readTextBounded(counted(row.chunks).stream, row.max), row.want);
    });
  }

  it('stops at the first chunk past the cap and destroys the source', async () => {
    const { stream, state } = counted(['12345', '67890', 'never', 'read']);
    await assert.rejects(readBodyBounded(stream, 8, { what: 'answer' }), (err: unknown) => err instanceof BodyTooLargeError && err.limit === 8 && /answer larger than 8 bytes/.test(err.message));
    assert.equal(state.pulled, 2);
    await new Promise((ok) => setImmediate(ok));
    assert.equal(state.destroyed, true);
  });

  it('with destroy: false leaves the source open (a request about to get its 413)', async () => {
    const { stream, state } = counted(['12345', '67890', 'rest']);
    await assert.rejects(readBodyBounded(stream, 8, { destroy: false }), BodyTooLargeError);
    await new Promise((ok) => setImmediate(ok));
    assert.equal(state.destroyed, false);
    stream.destroy();
  });

  it('an endless source costs at most the cap', async () => {
    let pulled = 0;
    const endless = Readable.from((function* () {
      for (;;) {
        pulled++;
        yield Buffer.alloc(1024);
      }
    })());
    await assert.rejects(readBodyBounded(endless, 64 * 1024), BodyTooLargeError);
    assert.ok(pulled <= 66, `pulled ${pulled} chunks`);
  });
});

describe('readBodyPrefix', () => {
  it('returns at most the prefix and stops reading', async () => {
    const { stream, state } = counted(['abc', 'def', 'ghi', 'jkl']);
    assert.equal(await readBodyPrefix(stream, 5), 'abcde');
    assert.equal(state.pulled, 2);
  });

  it('returns a short body whole', async () => {
    assert.equal(await readBodyPrefix(counted(['ab', 'c']).stream, 5), 'abc');
  });
});
