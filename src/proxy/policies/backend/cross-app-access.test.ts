import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { CrossAppAccessAuth, OAuthClientAuthPolicy, OAuthTokenCachePolicy, OAuthTokenSpecPolicy } from '../../../ir/policy.ts';
import { fakePolicyContext } from '../../testing/policy-context.ts';
import { compileCrossAppAccess } from './cross-app-access.ts';
import { TokenEndpointError, TokenExchangeRejection } from './oauth-endpoint.ts';
import { compileTokenMechanism } from './token-auth.ts';
import { ID_JAG_TYPE, startFakeIdp, startFakeResourceAs, type FakeIdp, type FakeResourceAs } from './testing/fake-oauth.ts';

const clientKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = clientKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

describe('crossAppAccess (ID-JAG)', () => {
  let idp: FakeIdp;
  let as: FakeResourceAs;

  before(async () => {
    idp = await startFakeIdp({ gateway: { secret: 'idp-secret' }, 'gateway-post': { secret: 'post-secret' }, 'gateway-jwt': { publicKey: clientKey.publicKey } }, { gateway: 'gw-at-chat', 'gateway-post': 'gw-at-chat', 'gateway-jwt': 'gw-at-chat' });
    as = await startFakeResourceAs(idp, { 'gw-at-chat': { secret: 'as-secret' } });
  });
  after(async () => {
    await idp?.stop();
    await as?.stop();
  });

  const spec = (over: { idpAuth?: OAuthClientAuthPolicy; subjectToken?: OAuthTokenSpecPolicy; cache?: OAuthTokenCachePolicy } = {}): CrossAppAccessAuth => ({
    identityProvider: { url: idp.url, path: '/oauth2/token', clientAuth: over.idpAuth ?? { clientId: 'gateway', secret: 'idp-secret' } },
    resourceAuthorizationServer: { url: as.url, path: '/token', clientAuth: { clientId: 'gw-at-chat', secret: 'as-secret' } },
    audience: as.issuer, resources: ['https://api.chat.example/'], scopes: ['chat.read', 'chat.history'],
    ...(over.subjectToken ? { subjectToken: over.subjectToken } : {}),
    ...(over.cache ? { cache: over.cache } : {}),
  });

  const clientAuths: { name: string; clientId: string; auth: OAuthClientAuthPolicy; check: (r: FakeIdp['requests'][number]) => void }[] = [
    { name: 'client_secret_basic', clientId: 'gateway', auth: { clientId: 'gateway', secret: 'idp-secret' }, check: (r) => assert.equal(r.authorization, `Basic ${Buffer.from('gateway:idp-secret').toString('base64')}`) },
    { name: 'client_secret_post', clientId: 'gateway-post', auth: { clientId: 'gateway-post', secret: 'post-secret', method: 'ClientSecretPost' }, check: (r) => assert.deepEqual([r.form.client_id, r.form.client_secret], ['gateway-post', 'post-secret']) },
    {
      name: 'private_key_jwt', clientId: 'gateway-jwt',
      auth: { clientId: 'gateway-jwt', method: 'PrivateKeyJwt', privateKeyJwt: { signingKey: PEM, assertionAudience: '' } },
      check: (r) => assert.match(r.form.client_assertion ?? '', /^ey/),
    },
  ];
  for (const c of clientAuths) {
    it(`two steps with ${c.name} at the IdP: the ID-JAG's claims, then the access token from the resource AS`, async () => {
      const auth = c.name === 'private_key_jwt' ? { ...c.auth, privateKeyJwt: { signingKey: PEM, assertionAudience: `${idp.issuer}/oauth2/token` } } : c.auth;
      const xaa = compileCrossAppAccess(spec({ idpAuth: auth }));
      const idToken = await idp.idToken(`user-${c.name}`, c.clientId);
      const before = { idp: idp.requests.length, as: as.requests.length };
      const token = await xaa.accessToken(fakePolicyContext({ headers: { authorization: `Bearer ${idToken}` } }));

      const claims = await as.verify(token);
      assert.equal(claims?.sub, `user-${c.name}`);
      assert.equal(claims?.scope, 'chat.read chat.history');
      const exchange = idp.requests[before.idp];
      c.check(exchange);
      assert.deepEqual({ ...exchange.form, client_id: undefined, client_secret: undefined, client_assertion: undefined, client_assertion_type: undefined }, {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', requested_token_type: ID_JAG_TYPE, audience: as.issuer,
        resource: 'https://api.chat.example/', scope: 'chat.read chat.history', subject_token: idToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', client_id: undefined, client_secret: undefined, client_assertion: undefined, client_assertion_type: undefined,
      });
      const grant = idp.issuedGrants.at(-1)!;
      assert.equal(grant.typ, 'oauth-id-jag+jwt');
      assert.deepEqual([grant.claims.aud, grant.claims.client_id, grant.claims.resource], [as.issuer, 'gw-at-chat', 'https://api.chat.example/']);
      const bearer = as.requests[before.as];
      assert.equal(bearer.form.grant_type, 'urn:ietf:params:oauth:grant-type:jwt-bearer');
      assert.equal(bearer.authorization, `Basic ${Buffer.from('gw-at-chat:as-secret').toString('base64')}`);
    });
  }

  it('caches the access token per subject: a second request of the same user makes no token request', async () => {
    const xaa = compileCrossAppAccess(spec());
    const alice = await idp.idToken('alice', 'gateway');
    const bob = await idp.idToken('bob', 'gateway');
    const count = () => idp.requests.length + as.requests.length;
    const start = count();
    const [a1, a2] = await Promise.all([alice, alice].map((t) => xaa.accessToken(fakePolicyContext({ headers: { authorization: `Bearer ${t}` } }))));
    assert.equal(a1, a2);
    assert.equal(count() - start, 2, 'concurrent requests share one exchange');
    const b = await xaa.accessToken(fakePolicyContext({ headers: { authorization: `Bearer ${bob}` } }));
    assert.notEqual(b, a1);
    assert.equal(count() - start, 4);
    assert.equal(await xaa.accessToken(fakePolicyContext({ headers: { authorization: `Bearer ${alice}` } })), a1);
    assert.equal(count() - start, 4);
  });

  it('maxEntries 0 disables the cache', async () => {
    const xaa = compileCrossAppAccess(spec({ cache: { inMemory: { maxEntries: 0 } } }));
    const t = await idp.idToken('carol', 'gateway');
    const start = as.requests.length;
    for (let i = 0; i < 2; i++) await xaa.accessToken(fakePolicyContext({ headers: { authorization: `Bearer ${t}` } }));
    assert.equal(as.requests.length - start, 2);
  });

  it('reads the subject token from the configured source', async () => {
    const xaa = compileCrossAppAccess(spec({ subjectToken: { source: { header: { name: 'x-id-token' } } } }));
    const t = await idp.idToken('dave', 'gateway');
    const token = await xaa.accessToken(fakePolicyContext({ headers: { authorization: 'Bearer gateway-api-key', 'x-id-token': t } }));
    assert.equal((await as.verify(token))?.sub, 'dave');
  });

  const failures: { name: string; setup: () => void; headers: (t: string) => Record<string, string>; reject: RegExp | (new (...a: never[]) => Error) }[] = [
    { name: 'no subject token: 401 rejection', setup: () => undefined, headers: () => ({}), reject: TokenExchangeRejection },
    { name: 'an ID token the IdP cannot verify: it refuses (invalid_grant)', setup: () => undefined, headers: () => ({ authorization: 'Bearer x.y.z' }), reject: /answered 400 \(invalid_grant\)/ },
    { name: 'the IdP fails', setup: () => idp.failWith(503, 'temporarily_unavailable', 1), headers: (t) => ({ authorization: `Bearer ${t}` }), reject: /answered 503 \(temporarily_unavailable\)/ },
    { name: 'the resource AS fails', setup: () => as.failWith(500, 'server_error', 1), headers: (t) => ({ authorization: `Bearer ${t}` }), reject: /answered 500 \(server_error\)/ },
  ];
  for (const c of failures) {
    it(`fails: ${c.name}`, async () => {
      const xaa = compileCrossAppAccess(spec());
      c.setup();
      const t = await idp.idToken(`fail-${c.name}`, 'gateway');
      const err = await xaa.accessToken(fakePolicyContext({ headers: c.headers(t) })).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof Error, 'rejected');
      if (c.reject instanceof RegExp) {
        assert.ok(err instanceof TokenEndpointError, String(err));
        assert.match(err.message, c.reject);
      } else assert.ok(err instanceof c.reject, String(err));
    });
  }

  const invalid: { name: string; spec: Partial<CrossAppAccessAuth> | Record<string, unknown>; error: RegExp }[] = [
    { name: 'no endpoints', spec: { audience: 'a' }, error: /needs identityProvider and resourceAuthorizationServer/ },
    { name: 'a backendRef endpoint whose backend is in no config', spec: { identityProvider: { backendKey: 'b', clientAuth: { clientId: 'c', secret: 's' } }, resourceAuthorizationServer: { url: 'http://x', clientAuth: { clientId: 'c', secret: 's' } }, audience: 'a' }, error: /crossAppAccess.identityProvider: backend b is not in the config/ },
    { name: 'no clientAuth', spec: { identityProvider: { url: 'http://x' }, resourceAuthorizationServer: { url: 'http://y' }, audience: 'a' }, error: /needs clientAuth/ },
    { name: 'ClientSecretBasic without a secret', spec: { identityProvider: { url: 'http://x', clientAuth: { clientId: 'c' } }, resourceAuthorizationServer: { url: 'http://y', clientAuth: { clientId: 'c', secret: 's' } }, audience: 'a' }, error: /ClientSecretBasic needs secretRef/ },
  ];
  for (const c of invalid) {
    it(`refuses to compile: ${c.name}`, () => assert.throws(() => compileTokenMechanism({ crossAppAccess: c.spec as never /* malformed on purpose: the compile-time checks under test */ }), c.error));
  }
});
