import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizePath, normalizeTarget, PathRefusal } from './path.ts';

describe('normalizeTarget: canonical paths', () => {
  const cases: { name: string; target: string; want: string }[] = [
    { name: 'a plain path is returned as is', target: '/api/v1/items', want: '/api/v1/items' },
    { name: 'the root', target: '/', want: '/' },
    { name: 'encoded lowercase letter is decoded', target: '/%61dmin/secret', want: '/admin/secret' },
    { name: 'encoded uppercase letter is decoded', target: '/%41DMIN', want: '/ADMIN' },
    { name: 'encoded digit, dash, underscore, tilde are decoded', target: '/%31%2d%5f%7e', want: '/1-_~' },
    { name: 'encoded reserved character keeps its encoding', target: '/a%3Ab', want: '/a%3Ab' },
    { name: 'lowercase hex of a reserved character is uppercased', target: '/a%3ab%20c', want: '/a%3Ab%20c' },
    { name: 'mixed-case hex of a non-ASCII byte is uppercased', target: '/caf%c3%a9', want: '/caf%C3%A9' },
    { name: 'dot-segment at the start', target: '/./admin', want: '/admin' },
    { name: 'dot-dot at the start stays at the root', target: '/../admin', want: '/admin' },
    { name: 'dot-dot far above the root', target: '/../../../../etc/passwd', want: '/etc/passwd' },
    { name: 'dot-dot in the middle', target: '/public/../admin/secret', want: '/admin/secret' },
    { name: 'encoded dot-dot in the middle', target: '/public/%2e%2e/admin/secret', want: '/admin/secret' },
    { name: 'mixed encoded dot-dot', target: '/public/.%2E/admin', want: '/admin' },
    { name: 'encoded single dot', target: '/%2e/admin', want: '/admin' },
    { name: 'dot in the middle', target: '/a/./b', want: '/a/b' },
    { name: 'dot at the end keeps a trailing slash', target: '/a/.', want: '/a/' },
    { name: 'dot-dot at the end keeps a trailing slash', target: '/a/b/..', want: '/a/' },
    { name: 'dot-dot at the end of a one-segment path', target: '/a/..', want: '/' },
    { name: 'RFC 3986 §5.2.4 example', target: '/a/b/c/./../../g', want: '/a/g' },
    { name: 'leading double slash is merged', target: '//admin/secret', want: '/admin/secret' },
    { name: 'inner slashes are merged', target: '/a///b//c', want: '/a/b/c' },
    { name: 'trailing slash is kept', target: '/a/b/', want: '/a/b/' },
    { name: 'repeated trailing slashes become one', target: '/a//', want: '/a/' },
    { name: 'dots inside a name are a name', target: '/a/..b/c./.d', want: '/a/..b/c./.d' },
    { name: 'three dots are a name', target: '/a/.../b', want: '/a/.../b' },
    { name: 'a dot-file stays', target: '/.well-known/openid-configuration', want: '/.well-known/openid-configuration' },
    { name: 'case is kept (paths are case-sensitive)', target: '/ADMIN', want: '/ADMIN' },
    { name: 'the query is untouched', target: '/a/../b?x=%2e%2e/../%2F&y=//', want: '/b?x=%2e%2e/../%2F&y=//' },
    { name: 'a plain path with a query is returned as is', target: '/a?b=%2F', want: '/a?b=%2F' },
    { name: 'an empty query is kept', target: '/a/./b?', want: '/a/b?' },
    { name: 'non-ASCII characters pass through', target: '/caf\u00e9/./x', want: '/caf\u00e9/x' },
    { name: 'a target that is not a path is left to the caller', target: '*', want: '*' },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(normalizeTarget(c.target), c.want));
  }

  it('returns the very same string on the fast path', () => {
    const target = '/api/v1/chat/completions?stream=true';
    assert.equal(normalizeTarget(target), target);
  });
});

describe('normalizeTarget: refusals', () => {
  const cases: { name: string; target: string; reason: RegExp }[] = [
    { name: 'encoded slash, uppercase', target: '/admin%2Fsecret', reason: /encoded slash/ },
    { name: 'encoded slash, lowercase', target: '/admin%2fsecret', reason: /encoded slash/ },
    { name: 'raw backslash', target: '/\\admin', reason: /backslash/ },
    { name: 'encoded backslash', target: '/public/..%5Cadmin', reason: /backslash/ },
    { name: 'encoded backslash, lowercase', target: '/%5cadmin', reason: /backslash/ },
    { name: 'encoded NUL', target: '/admin%00.png', reason: /NUL/ },
    { name: 'raw NUL', target: '/admin\u0000', reason: /control/ },
    { name: 'raw newline', target: '/a\nb', reason: /control/ },
    { name: 'raw DEL', target: '/a\u007fb', reason: /control/ },
    { name: 'raw space', target: '/a b', reason: /control/ },
    { name: 'fragment', target: '/public#/../admin', reason: /#/ },
    { name: 'percent at the end', target: '/a%', reason: /hex/ },
    { name: 'percent with one digit', target: '/a%4', reason: /hex/ },
    { name: 'percent with non-hex', target: '/a%zz', reason: /hex/ },
    { name: 'percent with one digit before the query', target: '/a%4?x=1', reason: /hex/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = normalizeTarget(c.target);
      assert.ok(result instanceof PathRefusal, `expected a refusal, got ${String(result)}`);
      assert.match(result.reason, c.reason);
    });
  }

  it('refuses a path that does not start with a slash', () => {
    assert.ok(normalizePath('admin/../x') instanceof PathRefusal);
  });
});
