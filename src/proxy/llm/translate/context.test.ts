import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultContext } from './context.ts';

describe('defaultContext ids', () => {
  it('are the prefix and 24 hex digits, distinct across several refills of the random pool', () => {
    const ids = Array.from({ length: 1000 }, () => defaultContext.newId('resp_'));
    for (const id of ids) assert.match(id, /^resp_[0-9a-f]{24}$/);
    assert.equal(new Set(ids).size, ids.length);
  });
});
