import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedStrings } from './shared-strings.ts';

// Whether two equal strings are one V8 string cannot be seen from JavaScript: the pool is checked
// through what it changes (nothing but identity) and what it must leave alone.
describe('SharedStrings', () => {
  it('leaves every value equal: strings at any depth, in arrays and objects, and non-strings', () => {
    const object = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', labels: { a: 'x' } }, spec: { n: 3, ok: true, none: null, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }, 'x', ['y', ['z']]] } };
    const copy = structuredClone(object);
    const pool = new SharedStrings();
    pool.share(object);
    pool.share(copy);
    assert.deepEqual(copy, object);
    assert.deepEqual(object, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', labels: { a: 'x' } }, spec: { n: 3, ok: true, none: null, rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }, 'x', ['y', ['z']]] } });
  });

  it('adds no property: inherited ones are not walked or written', () => {
    const proto = { inherited: 'p' };
    const object = Object.create(proto) as Record<string, unknown>;
    object.own = 'o';
    new SharedStrings().share(object);
    assert.deepEqual(Object.keys(object), ['own']);
    assert.equal(Object.hasOwn(object, 'inherited'), false);
  });

  it('takes long strings and many distinct ones without failing (bounded pool)', () => {
    const pool = new SharedStrings();
    const long = 'x'.repeat(10_000);
    const many = Array.from({ length: 70_000 }, (_, i) => `s${i}`);
    const object = { long, many };
    pool.share(object);
    assert.equal(object.long, long);
    assert.deepEqual(object.many, Array.from({ length: 70_000 }, (_, i) => `s${i}`));
  });
});
