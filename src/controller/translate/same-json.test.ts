import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sameJson } from './same-json.ts';

describe('sameJson', () => {
  const rows: { name: string; a: unknown; b: unknown; same: boolean }[] = [
    { name: 'equal primitives', a: 'x', b: 'x', same: true },
    { name: 'NaN equals NaN', a: Number.NaN, b: Number.NaN, same: true },
    { name: '0 and -0 differ', a: 0, b: -0, same: false },
    { name: 'string vs number', a: '1', b: 1, same: false },
    { name: 'nested equal', a: { x: [1, { y: 'z' }], w: null }, b: { w: null, x: [1, { y: 'z' }] }, same: true },
    { name: 'nested value differs', a: { x: [1, { y: 'z' }] }, b: { x: [1, { y: 'q' }] }, same: false },
    { name: 'array length differs', a: [1, 2], b: [1, 2, 3], same: false },
    { name: 'array vs object', a: [], b: {}, same: false },
    { name: 'undefined value vs missing key', a: { x: undefined }, b: {}, same: false },
    { name: 'undefined value vs other key', a: { x: undefined }, b: { y: undefined }, same: false },
    { name: 'null vs object', a: null, b: {}, same: false },
    { name: 'a Map is only equal to itself', a: new Map(), b: new Map(), same: false },
  ];
  for (const row of rows) it(row.name, () => assert.equal(sameJson(row.a, row.b), row.same));
});
