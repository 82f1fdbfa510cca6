/**
 * Backend auth `crossAppAccess` (ID-JAG) on a plain backend through a listening gateway, against a
 * local IdP and resource authorization server that sign and verify real JWTs: the client's ID
 * token is exchanged for an ID-JAG (client_secret_basic at the IdP), the ID-JAG for an access
 * token (private_key_jwt at the resource AS), and that token reaches the backend as Bearer —
 * cached per user. A request without an ID token is refused with 401; a failing token endpoint
 * answers 502 without reaching the backend.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startFakeIdp, startFakeResourceAs, type FakeIdp, type FakeResourceAs } from '../../src/proxy/policies/backend/testing/fake-oauth.ts';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway, prefixRoute, service } from '../support/manifests.ts';

const doc = (o: unknown) => `---\n${stringify(o)}`;
const asClientKey = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('backend auth crossAppAccess on a plain backend', () => {
  let idp: FakeIdp;
  let as: FakeResourceAs;
  let echo: EchoServer;
  let gw: GatewayHarness;

  before(async () => {
    idp = await startFakeIdp({ 'wiki-gateway': { secret: 'idp-s3cret' } }, { 'wiki-gateway': 'chat-client-7' });
    as = await startFakeResourceAs(idp, { 'chat-client-7': { publicKey: asClientKey.publicKey } });
    echo = await startEchoServer('chat-api');
    gw = await startGateway(httpGateway() + service('chat', echo) + prefixRoute('r', '/chat', 'chat')
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'idp-client', namespace: 'default' }, stringData: { clientSecret: 'idp-s3cret' } })
      + doc({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'as-client-key', namespace: 'default' }, stringData: { signingKey: asClientKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) } })
      + doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: 'xaa', namespace: 'default' },
        spec: {
          targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'r' }],
          backend: { auth: { crossAppAccess: {
            identityProvider: { url: idp.url, path: '/oauth2/token', clientAuth: { clientId: 'wiki-gateway', secretRef: { name: 'idp-client' } } },
            resourceAuthorizationServer: { url: as.url, path: '/token', clientAuth: {
              clientId: 'chat-client-7', method: 'PrivateKeyJwt', privateKeyJwt: { signingKeyRef: { name: 'as-client-key' }, assertionAudience: `${as.url}/token`, kid: 'k1' },
            } },
            audience: as.issuer, resources: ['https://api.chat.example/'], scopes: ['chat.read', 'chat.history'],
          } } },
        },
      }));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await echo?.close();
    await idp?.stop();
    await as?.stop();
  });

  it('sends the resource AS access token for the user, cached for the next request', async () => {
    const idToken = await idp.idToken('U019488227', 'wiki-gateway');
    const start = { idp: idp.requests.length, as: as.requests.length };
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await gw.request(80, { path: '/chat/history', headers: { authorization: `Bearer ${idToken}` } });
      assert.equal(res.status, 200, res.text);
      seen.push(res.echo().headers.authorization as string);
    }
    assert.equal(seen[0], seen[1]);
    assert.match(seen[0], /^Bearer /);
    const claims = await as.verify(seen[0].slice('Bearer '.length));
    assert.equal(claims?.sub, 'U019488227');
    assert.equal(claims?.scope, 'chat.read chat.history');
    assert.equal(claims?.aud, 'https://api.chat.example/');
    assert.deepEqual([idp.requests.length - start.idp, as.requests.length - start.as], [1, 1], 'one exchange for two requests');

    const exchange = idp.requests[start.idp];
    assert.equal(exchange.authorization, `Basic ${Buffer.from('wiki-gateway:idp-s3cret').toString('base64')}`);
    assert.deepEqual(exchange.form, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      audience: as.issuer, subject_token: idToken, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      resource: 'https://api.chat.example/', scope: 'chat.read chat.history',
    });
    const grant = idp.issuedGrants.at(-1)!;
    assert.deepEqual([grant.typ, grant.claims.aud, grant.claims.client_id], ['oauth-id-jag+jwt', as.issuer, 'chat-client-7']);
    const bearer = as.requests[start.as];
    assert.equal(bearer.form.grant_type, 'urn:ietf:params:oauth:grant-type:jwt-bearer');
    assert.equal(bearer.form.client_assertion_type, 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    assert.equal(bearer.authorization, undefined);
  });

  it('a request without an ID token is refused with 401 and reaches neither the IdP nor the backend', async () => {
    const before = { idp: idp.requests.length, echo: echo.seen.length };
    const res = await gw.request(80, { path: '/chat/history' });
    assert.equal(res.status, 401, res.text);
    assert.deepEqual([idp.requests.length, echo.seen.length], [before.idp, before.echo]);
  });

  it('an ID token the IdP refuses: 502, the backend is not called', async () => {
    const echoed = echo.seen.length;
    const res = await gw.request(80, { path: '/chat/history', headers: { authorization: 'Bearer not-a-jwt' } });
    assert.equal(res.status, 502, res.text);
    assert.match(res.text, /backend_token_endpoint_failed/);
    assert.equal(echo.seen.length, echoed);
    assert.equal(idp.requests.at(-1)?.form.subject_token, 'not-a-jwt');
  });

  it('the resource AS failing: 502', async () => {
    as.failWith(503, 'temporarily_unavailable', 1);
    const res = await gw.request(80, { path: '/chat/history', headers: { authorization: `Bearer ${await idp.idToken('someone-new', 'wiki-gateway')}` } });
    assert.equal(res.status, 502, res.text);
  });
});
