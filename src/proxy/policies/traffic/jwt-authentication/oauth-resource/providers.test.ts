import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quirksOf } from './providers.ts';

describe('discovery URLs per provider', () => {
  const cases = [
    {
      name: 'generic: RFC 8414 inserted, then OIDC inserted and appended',
      provider: undefined,
      issuer: 'https://as.example.com/tenant1',
      want: [
        'https://as.example.com/.well-known/oauth-authorization-server/tenant1',
        'https://as.example.com/.well-known/openid-configuration/tenant1',
        'https://as.example.com/tenant1/.well-known/openid-configuration',
      ],
    },
    {
      name: 'generic root issuer: no duplicate URLs',
      provider: undefined,
      issuer: 'https://as.example.com/',
      want: ['https://as.example.com/.well-known/oauth-authorization-server', 'https://as.example.com/.well-known/openid-configuration'],
    },
    { name: 'idp_1 Auth0: trailing-slash issuer', provider: 'idp_1', issuer: 'https://t.auth0.com/', want: ['https://t.auth0.com/.well-known/openid-configuration'] },
    {
      name: 'idp_2 Keycloak: under the realm path',
      provider: 'idp_2',
      issuer: 'https://kc.example.com/realms/demo',
      want: ['https://kc.example.com/realms/demo/.well-known/openid-configuration', 'https://kc.example.com/realms/demo/.well-known/oauth-authorization-server'],
    },
    {
      name: 'idp_3 Okta: custom authorization server, RFC 8414 name appended first',
      provider: 'idp_3',
      issuer: 'https://org.okta.com/oauth2/default',
      want: ['https://org.okta.com/oauth2/default/.well-known/oauth-authorization-server', 'https://org.okta.com/oauth2/default/.well-known/openid-configuration'],
    },
    { name: 'idp_4 Descope', provider: 'idp_4', issuer: 'https://api.descope.com/v1/apps/P1', want: ['https://api.descope.com/v1/apps/P1/.well-known/openid-configuration'] },
    { name: 'idp_5 Authentik: trailing slash kept out', provider: 'idp_5', issuer: 'https://ak.example.com/application/o/mcp/', want: ['https://ak.example.com/application/o/mcp/.well-known/openid-configuration'] },
    { name: 'idp_6 Entra ID: v2.0 path', provider: 'idp_6', issuer: 'https://login.microsoftonline.com/t1/v2.0', want: ['https://login.microsoftonline.com/t1/v2.0/.well-known/openid-configuration'] },
  ] as const;
  for (const c of cases) it(c.name, () => assert.deepEqual(quirksOf(c.provider).discoveryUrls(c.issuer), c.want));
});
