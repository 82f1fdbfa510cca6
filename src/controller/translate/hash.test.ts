import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson, sortKeys } from './hash.ts';

/** The reference: a sorted copy of every object, then JSON (what canonicalJson wrote before it used a property list). */
const reference = (value: unknown): string => JSON.stringify(sortKeys(value));

class Point {
  x = 1;
  y = 2;
}

describe('canonicalJson', () => {
  const rows: { name: string; value: unknown }[] = [
    { name: 'nested objects and arrays', value: { b: [{ z: 1, a: { d: null, c: 'x' } }, 3], a: { y: true, x: [] } } },
    { name: 'array-index keys come first, by number', value: { b: 1, 10: 'ten', 2: 'two', 0: 'zero', a: { 3: 1, 1: 2 } } },
    { name: 'keys that look numeric but are not array indices', value: { '01': 1, '4294967295': 2, '4294967294': 3, '-1': 4, '1.5': 5, '1e3': 6, 9: 7 } },
    { name: 'undefined and function values are left out', value: { a: undefined, b: () => 1, c: [undefined, () => 1], d: 1 } },
    { name: 'a key one object has and another lacks', value: [{ a: 1, b: 2 }, { b: 3 }, { c: { a: 4 } }] },
    { name: 'keys named like Object.prototype\'s functions', value: [{ toString: 'x', constructor: 1 }, { valueOf: 2 }, {}] },
    { name: 'an own __proto__ key (as JSON.parse makes it)', value: JSON.parse('[{"__proto__":{"a":1}},{"b":2}]') as unknown },
    { name: 'a null-prototype object', value: Object.assign(Object.create(null) as object, { b: 1, a: 2 }) },
    { name: 'a class instance', value: { p: new Point(), q: { x: 3 } } },
    { name: 'a Date (its toJSON is not what the copy writes)', value: { at: new Date(0), b: 1 } },
    { name: 'an own toJSON', value: { a: { toJSON: () => 'x', b: 1 } } },
    { name: 'keys sorted by UTF-16 code units', value: { é: 1, z: 2, Z: 3, '\u{1F600}': 4, '\uFFFF': 5, '': 6 } },
    // eslint-disable-next-line no-sparse-arrays -- a hole is the case checked
    { name: 'sparse arrays', value: [1, , { b: 1, a: 2 }] },
    { name: 'scalars', value: 'text' },
    { name: 'null', value: null },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.equal(canonicalJson(row.value), reference(row.value));
    });
  }

  it('equals the sorted copy\'s JSON for any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => canonicalJson(value) === reference(value)), { numRuns: 2000 });
  });

  it('equals the sorted copy\'s JSON for objects with array-index and prototype-named keys', () => {
    const key = fc.oneof(fc.string({ maxLength: 4 }), fc.nat({ max: 20 }).map(String), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '01', '4294967295'));
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.integer(), fc.string({ maxLength: 3 }), fc.constant(undefined), fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(key, tie('node'), { maxKeys: 4 })),
    })).node;
    fc.assert(fc.property(value, (v) => canonicalJson(v) === reference(v)), { numRuns: 2000 });
  });
});
