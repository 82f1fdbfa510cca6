import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyHeaderChanges, policyHeaderChanges } from './policy-headers.ts';

const rows: readonly { name: string; client: Record<string, string>; upstream: Record<string, string | string[]>; changed?: boolean; expect: Record<string, string | undefined> }[] = [
  { name: 'nothing changed: empty', client: { a: '1' }, upstream: { a: '1' }, expect: {} },
  { name: 'not flagged: not computed', client: { a: '1' }, upstream: { b: '2' }, changed: false, expect: {} },
  { name: 'added and changed are set', client: { a: '1', b: 'x' }, upstream: { a: '1', b: 'y', c: 'z' }, expect: { b: 'y', c: 'z' } },
  { name: 'removed is removed', client: { a: '1', secret: 's' }, upstream: { a: '1' }, expect: { secret: undefined } },
  { name: 'gateway-owned names are left out', client: { 'x-forwarded-for': '1.1.1.1', connection: 'x' }, upstream: { 'x-forwarded-for': '1.1.1.1, 2.2.2.2', host: 'up', 'content-length': '3', 'x-forwarded-proto': 'http' }, expect: {} },
  { name: 'repeated values compare joined', client: { a: 'x, y' }, upstream: { a: ['x', 'y'] }, expect: {} },
];

for (const row of rows) {
  test(`policyHeaderChanges: ${row.name}`, () => {
    assert.deepEqual(Object.fromEntries(policyHeaderChanges(row.client, row.upstream, row.changed ?? true)), row.expect);
  });
}

test('applyHeaderChanges sets, removes and skips', () => {
  const headers: Record<string, string> = { a: '1', b: '2', keep: 'k' };
  applyHeaderChanges(headers, new Map([['a', undefined], ['c', '3'], ['keep', 'no']]), new Set(['keep']));
  assert.deepEqual(headers, { b: '2', c: '3', keep: 'k' });
});
