/**
 * The backend-policy token mechanisms on LLM requests: where the token goes for each provider
 * hint (the mechanism's location, never the provider's key header), the subject token read from
 * the request's CEL input, extra credentials kept, no SigV4 on top, and how failures surface
 * (a request without a subject token is refused with its status; a failing token endpoint is a
 * CredentialError so the next provider may be tried).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import type { CelInput } from '../../../../cel/index.ts';
import type { BackendAuthPolicy } from '../../../../ir/policy.ts';
import { startFakeIdp, startFakeResourceAs, type FakeIdp, type FakeResourceAs } from '../../../policies/backend/testing/fake-oauth.ts';
import type { CredentialHint } from '../../translate/providers/types.ts';
import { CredentialError, CredentialRequestError, LlmCredentials, type SignableRequest } from './index.ts';

const BEARER: CredentialHint = { kind: 'header', name: 'authorization', prefix: 'Bearer ' };
const X_API_KEY: CredentialHint = { kind: 'header', name: 'x-api-key' };
const BEDROCK: CredentialHint = { kind: 'sigv4', service: 'bedrock', region: 'us-west-2' };
const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const SIGNING_KEY = signer.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

const request = (credential: CredentialHint): SignableRequest => ({ host: 'upstream.test', method: 'POST', path: '/v1/x', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), credential });
const celWith = (headers: Record<string, string>, url = '/v1/chat/completions'): (() => CelInput) => () => ({ request: { method: 'POST', url, headers } });

describe('LlmCredentials: jwtSign, oauthTokenExchange and crossAppAccess', () => {
  let idp: FakeIdp;
  let as: FakeResourceAs;
  before(async () => {
    idp = await startFakeIdp({ gateway: { secret: 'idp-secret' } }, { gateway: 'gw' });
    as = await startFakeResourceAs(idp, { gw: { secret: 'as-secret' } });
  });
  after(async () => {
    await idp?.stop();
    await as?.stop();
  });

  const exchange = (): BackendAuthPolicy => ({ oauthTokenExchange: { url: idp.url, path: '/oauth2/token', audiences: ['llm-api'], clientAuth: { clientId: 'gateway', secret: 'idp-secret' } } });
  const xaa = (): BackendAuthPolicy => ({ crossAppAccess: {
    identityProvider: { url: idp.url, path: '/oauth2/token', clientAuth: { clientId: 'gateway', secret: 'idp-secret' } },
    resourceAuthorizationServer: { url: as.url, path: '/token', clientAuth: { clientId: 'gw', secret: 'as-secret' } },
    audience: as.issuer, scopes: ['llm.invoke'],
  } });

  const placements: { name: string; hint: CredentialHint; auth: () => BackendAuthPolicy; header: string; prefix: string; verify: (token: string, user: string) => Promise<void> }[] = [
    {
      name: 'jwtSign on an x-api-key provider: Authorization Bearer (its own default location)', hint: X_API_KEY,
      auth: () => ({ jwtSign: { signingKey: SIGNING_KEY, alg: 'ES256', claims: { iss: 'switchboard', aud: 'provider' } } }), header: 'authorization', prefix: 'Bearer ',
      verify: async (token) => void (await jwtVerify(token, signer.publicKey, { issuer: 'switchboard', audience: 'provider' })),
    },
    {
      name: 'jwtSign with a location', hint: BEARER,
      auth: () => ({ jwtSign: { signingKey: SIGNING_KEY, alg: 'ES256', location: { header: { name: 'x-signed' } } } }), header: 'x-signed', prefix: '',
      verify: async (token) => void (await jwtVerify(token, signer.publicKey)),
    },
    {
      name: 'oauthTokenExchange: the exchanged token for the client subject', hint: X_API_KEY, auth: exchange, header: 'authorization', prefix: 'Bearer ',
      verify: async (token, user) => assert.equal((await jwtVerify(token, idp.publicKey, { audience: 'llm-api' })).payload.sub, user),
    },
    {
      name: 'crossAppAccess: the resource AS access token for the user', hint: BEARER, auth: xaa, header: 'authorization', prefix: 'Bearer ',
      verify: async (token, user) => assert.equal((await as.verify(token))?.sub, user),
    },
  ];
  for (const c of placements) {
    it(c.name, async () => {
      const user = `user-${placements.indexOf(c)}`;
      const idToken = await idp.idToken(user, 'gateway');
      const out = await new LlmCredentials({ env: {} }).apply(request(c.hint), c.auth(), {}, celWith({ authorization: `Bearer ${idToken}` }));
      const value = out.headers[c.header];
      assert.ok(value?.startsWith(c.prefix), `${c.header}: ${value}`);
      await c.verify(value.slice(c.prefix.length), user);
      assert.equal(out.headers['x-api-key'], undefined, 'the provider key header stays empty');
    });
  }

  it('extra credentials are written too; a Bedrock provider is not SigV4-signed over the token', async () => {
    const auth: BackendAuthPolicy = { ...exchange(), credentials: [{ location: { header: { name: 'x-tenant-key' } }, value: 'tk' }] };
    const out = await new LlmCredentials({ env: {} }).apply(request(BEDROCK), auth, {}, celWith({ authorization: `Bearer ${await idp.idToken('bedrock-user', 'gateway')}` }));
    assert.equal(out.headers['x-tenant-key'], 'tk');
    assert.match(out.headers.authorization, /^Bearer ey/);
    assert.equal(out.headers['x-amz-date'], undefined);
  });

  it('the exchanged token is cached across requests (one compiled mechanism per auth object)', async () => {
    const auth = exchange();
    const creds = new LlmCredentials({ env: {} });
    const cel = celWith({ authorization: `Bearer ${await idp.idToken('cached-user', 'gateway')}` });
    const start = idp.requests.length;
    const first = await creds.apply(request(BEARER), auth, {}, cel);
    const second = await creds.apply(request(BEARER), auth, {}, cel);
    assert.equal(first.headers.authorization, second.headers.authorization);
    assert.equal(idp.requests.length - start, 1);
  });

  const failures: { name: string; auth: () => BackendAuthPolicy; cel?: () => CelInput; noCel?: true; setup?: () => void; error: new (...a: never[]) => Error; status?: number }[] = [
    { name: 'exchange without a subject token: refused with 401', auth: exchange, cel: celWith({}), error: CredentialRequestError, status: 401 },
    { name: 'crossAppAccess without CEL input (no request to read): refused with 401', auth: xaa, noCel: true, error: CredentialRequestError, status: 401 },
    { name: 'the token endpoint fails: CredentialError', auth: exchange, setup: () => idp.failWith(503, 'temporarily_unavailable', 1), error: CredentialError },
  ];
  for (const c of failures) {
    it(c.name, async () => {
      c.setup?.();
      const cel = c.cel ?? celWith({ authorization: `Bearer ${await idp.idToken('failing', 'gateway')}` });
      const err = await (async () => new LlmCredentials({ env: {} }).apply(request(BEARER), c.auth(), {}, c.noCel ? undefined : cel))().then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof c.error, String(err));
      if (c.status !== undefined) assert.equal((err as CredentialRequestError).status, c.status);
    });
  }
});
