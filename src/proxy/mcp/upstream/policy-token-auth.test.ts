/**
 * MCP targets with the shared token mechanisms: crossAppAccess writes the resource AS token the
 * user's ID token was traded for; the mechanism's failures reject `prepare` (the target then
 * fails as an unavailable one would).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { TokenEndpointError, TokenExchangeRejection } from '../../policies/backend/oauth-endpoint.ts';
import { startFakeIdp, startFakeResourceAs, type FakeIdp, type FakeResourceAs } from '../../policies/backend/testing/fake-oauth.ts';
import { fakePolicyContext } from '../../testing/policy-context.ts';
import { compileTargetAccess } from './policy.ts';

describe('MCP target access: crossAppAccess', () => {
  let idp: FakeIdp;
  let as: FakeResourceAs;
  let policy: BackendPolicy;
  before(async () => {
    idp = await startFakeIdp({ mcp: { secret: 'a' } }, { mcp: 'mcp-at-as' });
    as = await startFakeResourceAs(idp, { 'mcp-at-as': { secret: 'b' } });
    policy = { sources: {}, auth: { crossAppAccess: {
      identityProvider: { url: idp.url, path: '/oauth2/token', clientAuth: { clientId: 'mcp', secret: 'a' } },
      resourceAuthorizationServer: { url: as.url, path: '/token', clientAuth: { clientId: 'mcp-at-as', secret: 'b' } },
      audience: as.issuer, resources: ['https://mcp.example/mcp'],
    } } };
  });
  after(async () => {
    await idp?.stop();
    await as?.stop();
  });

  it('writes the access token as Bearer, replacing the client Authorization', async () => {
    const access = compileTargetAccess(policy);
    assert.equal(access.failure, undefined);
    const idToken = await idp.idToken('erin', 'mcp');
    const out = await access.prepare({ accept: 'application/json', authorization: `Bearer ${idToken}` }, '/mcp', fakePolicyContext({ headers: { authorization: `Bearer ${idToken}` } }));
    const token = String(out.headers.authorization).replace(/^Bearer /, '');
    assert.deepEqual([(await as.verify(token))?.sub, (await as.verify(token))?.aud], ['erin', 'https://mcp.example/mcp']);
    assert.equal(out.headers.accept, 'application/json');
  });

  const failures = [
    { name: 'no request context', ctx: () => undefined, error: Error },
    { name: 'no ID token in the request', ctx: () => fakePolicyContext(), error: TokenExchangeRejection },
    { name: 'an ID token the IdP refuses', ctx: () => fakePolicyContext({ headers: { authorization: 'Bearer nope' } }), error: TokenEndpointError },
  ];
  for (const c of failures) {
    it(`prepare rejects: ${c.name}`, async () => {
      await assert.rejects(Promise.resolve(compileTargetAccess(policy).prepare({}, '/mcp', c.ctx())), c.error);
    });
  }
});
