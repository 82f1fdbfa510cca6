import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HeaderMap } from './headers.ts';
import { applyHeaderModifier, compileHeaderModifier } from './header-modifier.ts';

describe('applyHeaderModifier', () => {
  const modifier = compileHeaderModifier({
    set: [{ name: 'X-Set', value: 'new' }],
    add: [{ name: 'X-Add', value: 'two' }, { name: 'X-Fresh', value: 'v' }],
    remove: ['X-Gone'],
  });

  it('sets, appends and removes case-insensitively on requests', () => {
    const headers: HeaderMap = { 'x-set': 'old', 'x-add': 'one', 'x-gone': 'bye', keep: 'k' };
    applyHeaderModifier(headers, modifier, 'request');
    assert.deepEqual(headers, { 'x-set': 'new', 'x-add': 'one,two', 'x-fresh': 'v', keep: 'k' });
  });

  it('keeps added response headers as separate fields', () => {
    const headers: HeaderMap = { 'x-add': 'one' };
    applyHeaderModifier(headers, modifier, 'response');
    assert.deepEqual(headers['x-add'], ['one', 'two']);
  });
});
