import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { documentPath, parseOAuthPath, PROTECTED_RESOURCE_PREFIX } from './paths.ts';

describe('parseOAuthPath', () => {
  const cases = [
    { name: 'path-suffixed protected resource', path: '/.well-known/oauth-protected-resource/mcp', want: { document: 'protected-resource', resourcePath: '/mcp' } },
    { name: 'bare protected resource is the root resource', path: '/.well-known/oauth-protected-resource', want: { document: 'protected-resource', resourcePath: '/' } },
    { name: 'nested resource path', path: '/.well-known/oauth-protected-resource/team/a/mcp', want: { document: 'protected-resource', resourcePath: '/team/a/mcp' } },
    { name: 'RFC 8414 document', path: '/.well-known/oauth-authorization-server/mcp', want: { document: 'authorization-server', resourcePath: '/mcp' } },
    { name: 'OIDC document is the same answer', path: '/.well-known/openid-configuration/mcp', want: { document: 'authorization-server', resourcePath: '/mcp' } },
    { name: 'registration', path: '/.well-known/oauth-registration/mcp', want: { document: 'registration', resourcePath: '/mcp' } },
    { name: 'authorize redirect', path: '/.well-known/oauth-authorize/mcp', want: { document: 'authorize', resourcePath: '/mcp' } },
    { name: 'token proxy', path: '/.well-known/oauth-token/mcp', want: { document: 'token', resourcePath: '/mcp' } },
    { name: 'a longer name is not the prefix', path: '/.well-known/oauth-protected-resources/mcp', want: undefined },
    { name: 'other well-known names', path: '/.well-known/jwks.json', want: undefined },
    { name: 'not well-known at all', path: '/mcp', want: undefined },
  ] as const;
  for (const c of cases) it(c.name, () => assert.deepEqual(parseOAuthPath(c.path), c.want));
});

describe('documentPath', () => {
  it('uses the bare prefix for the root resource and appends any other path', () => {
    assert.equal(documentPath(PROTECTED_RESOURCE_PREFIX, '/'), '/.well-known/oauth-protected-resource');
    assert.equal(documentPath(PROTECTED_RESOURCE_PREFIX, '/mcp'), '/.well-known/oauth-protected-resource/mcp');
  });
});
