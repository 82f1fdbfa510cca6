import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePath } from '../routing/matchers.ts';
import { modifyPath } from './path-modifier.ts';

describe('ReplacePrefixMatch (the Gateway API table)', () => {
  const cases = [
    { path: '/foo/bar', prefix: '/foo', value: '/xyz', want: '/xyz/bar' },
    { path: '/foo/bar', prefix: '/foo', value: '/xyz/', want: '/xyz/bar' },
    { path: '/foo/bar', prefix: '/foo/', value: '/xyz', want: '/xyz/bar' },
    { path: '/foo/bar', prefix: '/foo/', value: '/xyz/', want: '/xyz/bar' },
    { path: '/foo', prefix: '/foo', value: '/xyz', want: '/xyz' },
    { path: '/foo/', prefix: '/foo', value: '/xyz', want: '/xyz/' },
    { path: '/foo/bar', prefix: '/foo', value: '', want: '/bar' },
    { path: '/foo/bar', prefix: '/foo', value: '/', want: '/bar' },
    { path: '/foo/', prefix: '/foo', value: '', want: '/' },
    { path: '/foo', prefix: '/foo', value: '', want: '/' },
    { path: '/foo/', prefix: '/foo', value: '/', want: '/' },
    { path: '/foo', prefix: '/foo', value: '/', want: '/' },
    { path: '/a/b', prefix: '/', value: '/v1', want: '/v1/a/b' },
  ];
  for (const c of cases) {
    it(`${c.path} with prefix ${c.prefix} → ${JSON.stringify(c.value)} gives ${c.want}`, () => {
      const matched = compilePath({ type: 'PathPrefix', value: c.prefix });
      assert.equal(modifyPath(c.path, { type: 'ReplacePrefixMatch', value: c.value }, matched), c.want);
    });
  }

  it('ReplaceFullPath replaces everything', () => {
    assert.equal(modifyPath('/a/b', { type: 'ReplaceFullPath', value: '/new' }, compilePath({ type: 'PathPrefix', value: '/a' })), '/new');
  });

  it('leaves the path alone when the match was not a prefix', () => {
    assert.equal(modifyPath('/a/b', { type: 'ReplacePrefixMatch', value: '/x' }, compilePath({ type: 'Exact', value: '/a/b' })), '/a/b');
  });
});
