import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JwtMcpPolicy } from '../../../../../ir/policy.ts';
import { parseMcpOAuthConfig } from './config.ts';

describe('parseMcpOAuthConfig', () => {
  it('reads provider, clientId and resourceMetadata', () => {
    assert.deepEqual(parseMcpOAuthConfig({ provider: 'idp_2', clientId: 'c', resourceMetadata: { scopes_supported: ['a'] } }, 'https://kc/realms/x'), {
      provider: 'idp_2',
      clientId: 'c',
      clientSecret: undefined,
      resourceMetadata: { scopes_supported: ['a'] },
      issuer: 'https://kc/realms/x',
    });
  });
  const invalid: { name: string; mcp: JwtMcpPolicy; issuer: string; message: RegExp }[] = [
    { name: 'unknown provider (a hand-written IR)', mcp: { provider: 'idp_9' as never /* malformed on purpose */ }, issuer: 'https://as', message: /mcp.provider/ },
    { name: 'empty clientId', mcp: { clientId: '' }, issuer: 'https://as', message: /mcp.clientId/ },
    { name: 'clientSecret without clientId', mcp: { clientSecret: 's3cret' }, issuer: 'https://as', message: /needs mcp.clientId/ },
    { name: 'empty clientSecret', mcp: { clientId: 'c', clientSecret: '' }, issuer: 'https://as', message: /clientSecretRef/ },
    { name: 'issuer that is not a URL', mcp: {}, issuer: 'my-issuer', message: /issuer is a URL/ },
  ];
  for (const c of invalid) it(`throws on ${c.name}`, () => assert.throws(() => parseMcpOAuthConfig(c.mcp, c.issuer), c.message));
});
