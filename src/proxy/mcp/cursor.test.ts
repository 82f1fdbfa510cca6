import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor } from './cursor.ts';

describe('composite cursor', () => {
  const targets = new Set(['a', 'b']);

  it('round-trips the next cursor of each target still listing', () => {
    const text = encodeCursor({ a: 'page-2', b: '{"o":10}' });
    assert.ok(text);
    assert.deepEqual(decodeCursor(text, targets), { a: 'page-2', b: '{"o":10}' });
  });

  it('is absent when every target is done', () => {
    assert.equal(encodeCursor({}), undefined);
  });

  const invalid = [
    { name: 'not ours', text: 'abc' },
    { name: 'bad base64 JSON', text: 'sb1.!!!' },
    { name: 'unknown target', text: encodeCursor({ c: 'x' }) ?? '' },
    { name: 'non-string cursor', text: 'sb1.' + Buffer.from('{"a":1}').toString('base64url') },
    { name: 'empty map', text: 'sb1.' + Buffer.from('{}').toString('base64url') },
    { name: 'array', text: 'sb1.' + Buffer.from('["a"]').toString('base64url') },
  ];
  for (const c of invalid) it(`rejects ${c.name}`, () => assert.equal(decodeCursor(c.text, targets), undefined));
});
