import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExpiringLru } from './expiring-lru.ts';

describe('ExpiringLru', () => {
  it('returns entries until they expire', () => {
    let now = 1000;
    const cache = new ExpiringLru<string>(4, () => now);
    cache.set('a', 'A', 2000);
    assert.equal(cache.get('a'), 'A');
    now = 2000;
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped when read');
  });

  it('does not store an entry that has already expired', () => {
    const cache = new ExpiringLru<string>(4, () => 5000);
    cache.set('a', 'A', 5000);
    assert.equal(cache.size, 0);
  });

  it('evicts the least recently used entry at the bound', () => {
    const cache = new ExpiringLru<number>(2, () => 0);
    cache.set('a', 1, 10);
    cache.set('b', 2, 10);
    assert.equal(cache.get('a'), 1, 'a is now the most recent');
    cache.set('c', 3, 10);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.get('c'), 3);
  });

  it('stores nothing with a bound of zero', () => {
    const cache = new ExpiringLru<number>(0, () => 0);
    cache.set('a', 1, 10);
    assert.equal(cache.get('a'), undefined);
  });
});
