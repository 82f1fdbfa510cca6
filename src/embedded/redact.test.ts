import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactAt } from './redact.ts';

describe('redactAt', () => {
  const value = { a: { key: 'k', keep: 'x' }, list: [{ v: 1 }, { v: 2 }], 'a/b': 's', 't~n': 's', tree: { deep: { n: 1 } } };
  const cases: { name: string; pointers: string[]; expected: unknown }[] = [
    { name: 'nothing to redact', pointers: [], expected: value },
    { name: 'one string', pointers: ['/a/key'], expected: { ...value, a: { key: '[redacted]', keep: 'x' } } },
    { name: 'an array element', pointers: ['/list/1'], expected: { ...value, list: [{ v: 1 }, '[redacted]'] } },
    { name: 'escaped keys (RFC 6901)', pointers: ['/a~1b', '/t~0n'], expected: { ...value, 'a/b': '[redacted]', 't~n': '[redacted]' } },
    { name: 'a whole subtree, and a pointer under it', pointers: ['/tree/deep/n', '/tree'], expected: { ...value, tree: '[redacted]' } },
    { name: 'a pointer to nothing is ignored', pointers: ['/missing/x'], expected: value },
    { name: 'the root', pointers: [''], expected: '[redacted]' },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(redactAt(value, c.pointers), c.expected));

  it('leaves the input untouched', () => {
    redactAt(value, ['/a/key']);
    assert.equal(value.a.key, 'k');
  });
});
