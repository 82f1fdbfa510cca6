import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import type { OAuthTokenExchangeAuth } from '../../../ir/policy.ts';
import { fakePolicyContext } from '../../testing/policy-context.ts';
import { TokenEndpointError, TokenExchangeRejection } from './oauth-endpoint.ts';
import { compileTokenExchange } from './token-exchange.ts';
import { publishBackends } from './service-targets.ts';
import { startFakeIdp, type FakeIdp } from './testing/fake-oauth.ts';

const unsigned = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** A JWT whose claims matter (may_act), signed by a key nobody checks here. */
const jwt = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256' }).sign(unsigned.privateKey);

describe('oauthTokenExchange', () => {
  let idp: FakeIdp;
  before(async () => {
    idp = await startFakeIdp({ gw: { secret: 's' } });
  });
  after(() => idp?.stop());

  const base = (extra: Partial<OAuthTokenExchangeAuth> = {}): OAuthTokenExchangeAuth => ({ url: idp.url, path: '/oauth2/token', audiences: ['api'], clientAuth: { clientId: 'gw', secret: 's' }, ...extra });

  const forms: { name: string; spec: () => OAuthTokenExchangeAuth; headers: () => Promise<Record<string, string>>; expect: (form: Record<string, string>, subject: string) => void }[] = [
    {
      name: 'RFC 8693 with the default subject (Authorization Bearer, access token type), audience and scopes',
      spec: () => base({ scopes: ['a', 'b'] }), headers: async () => ({ authorization: `Bearer ${await idp.idToken('u1', 'gw')}` }),
      expect: (f, subject) => assert.deepEqual(f, {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: subject, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', audience: 'api', scope: 'a b',
      }),
    },
    {
      name: 'requestedTokenType and a subject token type as an absolute URI, from a cookie',
      spec: () => base({ requestedTokenType: 'Jwt', subjectToken: { source: { cookie: { name: 'sid' } }, tokenType: 'urn:example:custom' } }),
      headers: async () => ({ cookie: `theme=dark; sid=${await idp.idToken('u2', 'gw')}` }),
      expect: (f) => assert.deepEqual([f.requested_token_type, f.subject_token_type], ['urn:ietf:params:oauth:token-type:jwt', 'urn:example:custom']),
    },
    {
      name: 'to a token endpoint given as backendRef (the ready endpoints of the backend in the newest compiled config)',
      spec: () => {
        const { hostname, port } = new URL(idp.url);
        publishBackends({ 'service/ns/idp:80': { key: 'service/ns/idp:80', kind: 'Service', namespace: 'ns', name: 'idp', rewriteHost: false, endpoints: [{ host: hostname, port: Number(port) }] } });
        const { url: _url, ...rest } = base();
        return { ...rest, backendKey: 'service/ns/idp:80' };
      },
      headers: async () => ({ authorization: `Bearer ${await idp.idToken('u4', 'gw')}` }),
      expect: (f, subject) => assert.deepEqual([f.grant_type, f.subject_token], ['urn:ietf:params:oauth:grant-type:token-exchange', subject]),
    },
    {
      name: 'additionalParams from CEL; a failing expression is left out',
      spec: () => base({ additionalParams: { tenant: 'request.headers["x-tenant"]', missing: 'request.headers["x-none"]' } }),
      headers: async () => ({ authorization: `Bearer ${await idp.idToken('u3', 'gw')}`, 'x-tenant': 'acme' }),
      expect: (f) => assert.deepEqual([f.tenant, 'missing' in f], ['acme', false]),
    },
  ];
  for (const c of forms) {
    it(`sends: ${c.name}`, async () => {
      const headers = await c.headers();
      const exchanger = compileTokenExchange(c.spec());
      const token = await exchanger.exchange(fakePolicyContext({ headers }));
      assert.match(token, /^ey/);
      const sent = idp.requests.at(-1)!;
      assert.equal(sent.authorization, `Basic ${Buffer.from('gw:s').toString('base64')}`);
      const subject = (headers.authorization ?? '').replace(/^Bearer /, '') || /sid=([^;]+)/.exec(headers.cookie ?? '')?.[1] || '';
      c.expect(sent.form, subject);
    });
  }

  it('JwtBearer sends the subject as assertion (the fake IdP refuses the grant type: a TokenEndpointError naming it)', async () => {
    const exchanger = compileTokenExchange(base({ grantType: 'JwtBearer' }));
    const t = await idp.idToken('u4', 'gw');
    await assert.rejects(exchanger.exchange(fakePolicyContext({ headers: { authorization: `Bearer ${t}` } })), (e: unknown) => e instanceof TokenEndpointError && /answered 400 \(unsupported_grant_type\)/.test(e.message));
    assert.deepEqual(idp.requests.at(-1)!.form, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: t });
  });

  const rejections: { name: string; spec: () => OAuthTokenExchangeAuth; headers: () => Promise<Record<string, string>>; status: number }[] = [
    { name: 'no subject token', spec: () => base(), headers: () => Promise.resolve({}), status: 401 },
    {
      name: 'mayAct Required and the subject does not name the actor', status: 403,
      spec: () => base({ actorToken: { source: { header: { name: 'x-actor' } }, mayAct: 'Required' } }),
      headers: async () => ({ authorization: `Bearer ${await jwt({ sub: 'user', may_act: { sub: 'agent-a' } })}`, 'x-actor': await jwt({ sub: 'agent-b' }) }),
    },
  ];
  for (const c of rejections) {
    it(`rejects with ${c.status}: ${c.name}`, async () => {
      const exchanger = compileTokenExchange(c.spec());
      const err = await exchanger.exchange(fakePolicyContext({ headers: await c.headers() })).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof TokenExchangeRejection, String(err));
      assert.equal(err.status, c.status);
    });
  }

  it('caches per form; concurrent identical exchanges share one call', async () => {
    const exchanger = compileTokenExchange(base());
    const t = await idp.idToken('u5', 'gw');
    const start = idp.requests.length;
    const tokens = await Promise.all([1, 2, 3].map(() => exchanger.exchange(fakePolicyContext({ headers: { authorization: `Bearer ${t}` } }))));
    assert.equal(new Set(tokens).size, 1);
    assert.equal(idp.requests.length - start, 1);
  });

  it('a failing endpoint is a TokenEndpointError and nothing is cached', async () => {
    const exchanger = compileTokenExchange(base());
    const t = await idp.idToken('u6', 'gw');
    idp.failWith(503, 'temporarily_unavailable', 1);
    await assert.rejects(exchanger.exchange(fakePolicyContext({ headers: { authorization: `Bearer ${t}` } })), TokenEndpointError);
    assert.match(await exchanger.exchange(fakePolicyContext({ headers: { authorization: `Bearer ${t}` } })), /^ey/);
  });
});
