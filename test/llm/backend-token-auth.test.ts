/**
 * The backend-policy token mechanisms on an `ai` backend through a listening gateway, with the
 * official OpenAI and Anthropic SDKs as clients and a mock OpenAI provider that accepts only a
 * bearer it can verify: `crossAppAccess` (the client's ID token → ID-JAG at a local IdP → access
 * token at a local resource AS, both signing real JWTs), `oauthTokenExchange` (RFC 8693 at the
 * IdP) and `jwtSign` (a fresh ES256 JWT per request). The client's Authorization carries its ID
 * token (the SDK's apiKey), which is what SPEC.md's default subject source reads; a gateway API key
 * elsewhere is kept apart by `subjectToken.source`. Failures come back in the client's format: no
 * subject token → 401, a failing token endpoint → 502.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFakeIdp, startFakeResourceAs, verifyEs256Sync, type FakeIdp, type FakeResourceAs } from '../../src/proxy/policies/backend/testing/fake-oauth.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, streamFixture, type MockProvider, type RecordedRequest } from './mock-provider.ts';

const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const UNAUTHORIZED = { status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } };

describe('LLM gateway: crossAppAccess, oauthTokenExchange and jwtSign on an ai backend', () => {
  let idp: FakeIdp;
  let as: FakeResourceAs;
  let openai: MockProvider;
  let gw: GatewayHarness;
  /** Which verified identity each provider request carried, in order. */
  const callers: string[] = [];

  /** The provider accepts a bearer from the resource AS, an IdP access token for `llm-api`, or a JWT from the gateway's signer. */
  function callerOf(req: RecordedRequest): string | undefined {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer) return undefined;
    const fromAs = verifyEs256Sync(bearer, as.publicKey, as.issuer);
    if (fromAs) return `xaa:${String(fromAs.sub)}:${String(fromAs.scope)}`;
    const exchanged = verifyEs256Sync(bearer, idp.publicKey, idp.issuer, 'llm-api');
    if (exchanged) return `exchange:${String(exchanged.sub)}`;
    const signed = verifyEs256Sync(bearer, signer.publicKey, 'switchboard', 'openai-proxy');
    return signed ? `signed:${String(signed.sub)}` : undefined;
  }

  before(async () => {
    idp = await startFakeIdp({ 'llm-gateway': { secret: 'idp-s3cret' } }, { 'llm-gateway': 'gw-at-llm' });
    as = await startFakeResourceAs(idp, { 'gw-at-llm': { secret: 'as-s3cret' } });
    openai = await startMockProvider();
    openai.answer('/v1/chat/completions', (req) => {
      const caller = callerOf(req);
      if (!caller) return UNAUTHORIZED;
      callers.push(caller);
      return req.json().stream === true ? streamFixture('openai-tool-calls') : responseFixture('openai-tool-calls');
    });
    const backend = (name: string, auth: string) => `
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { providerA: {}, host: ${openai.host}, port: ${openai.port} }
  policies:
    auth: ${auth}
    ai: { routes: ${ROUTES} }
---`;
    gw = await startGateway(llmGatewayYaml([{ name: 'xaa', prefix: '/xaa' }, { name: 'exchange', prefix: '/exchange' }, { name: 'signed', prefix: '/signed' }], `
apiVersion: v1
kind: Secret
metadata: { name: oauth-clients }
stringData: { idp: idp-s3cret, as: as-s3cret }
---
apiVersion: v1
kind: Secret
metadata: { name: jwt-signer }
stringData:
  signingKey: |
${(signer.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string).trim().replace(/^/gm, '    ')}
---
${backend('xaa', `{ crossAppAccess: {
      identityProvider: { url: "${idp.url}", path: /oauth2/token, clientAuth: { clientId: llm-gateway, secretRef: { name: oauth-clients, key: idp } } },
      resourceAuthorizationServer: { url: "${as.url}", path: /token, clientAuth: { clientId: gw-at-llm, method: ClientSecretPost, secretRef: { name: oauth-clients, key: as } } },
      audience: "${as.issuer}", scopes: [llm.invoke] } }`)}
${backend('exchange', `{ oauthTokenExchange: { url: "${idp.url}", path: /oauth2/token, audiences: [llm-api], subjectToken: { source: { header: { name: x-user-token } }, tokenType: IdToken },
      clientAuth: { clientId: llm-gateway, secretRef: { name: oauth-clients, key: idp } } } }`)}
${backend('signed', `{ jwtSign: { signingKeyRef: { name: jwt-signer }, alg: ES256, claims: { iss: switchboard, aud: openai-proxy, sub: gateway }, ttl: 60s } }`)}
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await openai?.stop();
    await idp?.stop();
    await as?.stop();
  });

  const client = (prefix: string, apiKey: string, headers: Record<string, string> = {}) => new OpenAI({ apiKey, baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0, defaultHeaders: headers });
  const ask = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Paris?' }] });

  it('crossAppAccess: the user ID token becomes a resource AS token the provider accepts; cached across requests, streaming too', async () => {
    const idToken = await idp.idToken('alice', 'llm-gateway');
    const start = { idp: idp.requests.length, as: as.requests.length, callers: callers.length };
    const answer = await ask(client('/xaa', idToken));
    assert.equal(answer.choices[0].message.tool_calls?.[0]?.type, 'function');
    const stream = await client('/xaa', idToken).chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    let chunks = 0;
    for await (const _chunk of stream) chunks++;
    assert.ok(chunks > 0);
    assert.deepEqual(callers.slice(start.callers), ['xaa:alice:llm.invoke', 'xaa:alice:llm.invoke']);
    assert.deepEqual([idp.requests.length - start.idp, as.requests.length - start.as], [1, 1], 'one ID-JAG and one access token for both requests');
    const exchange = idp.requests[start.idp].form;
    assert.deepEqual([exchange.requested_token_type, exchange.subject_token, exchange.audience, exchange.scope], ['urn:ietf:params:oauth:token-type:id-jag', idToken, as.issuer, 'llm.invoke']);
    assert.deepEqual([as.requests[start.as].form.client_id, as.requests[start.as].form.client_secret], ['gw-at-llm', 'as-s3cret']);
  });

  it('oauthTokenExchange: the subject token from a header of its own, while Authorization holds a gateway key', async () => {
    const idToken = await idp.idToken('bob', 'llm-gateway');
    const start = callers.length;
    const answer = await ask(client('/exchange', 'gateway-api-key', { 'x-user-token': idToken }));
    assert.equal(answer.choices.length, 1);
    assert.deepEqual(callers.slice(start), ['exchange:bob']);
    const form = idp.requests.at(-1)!.form;
    assert.deepEqual([form.subject_token, form.subject_token_type, form.audience], [idToken, 'urn:ietf:params:oauth:token-type:id_token', 'llm-api']);
  });

  it('jwtSign: a signed JWT per request, in place of a provider key', async () => {
    const start = callers.length;
    await ask(client('/signed', 'anything'));
    await ask(client('/signed', 'anything'));
    assert.deepEqual(callers.slice(start), ['signed:gateway', 'signed:gateway']);
  });

  it('no subject token: 401 in the OpenAI error format, the provider is not called', async () => {
    const before = openai.requests.length;
    const err = await ask(client('/exchange', 'gateway-api-key')).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 401);
    assert.match(err.message, /subject token/);
    assert.equal(openai.requests.length, before);
  });

  it('a failing IdP: 502 in the OpenAI error format', async () => {
    idp.failWith(503, 'temporarily_unavailable', 1);
    const err = await ask(client('/xaa', await idp.idToken('carol', 'llm-gateway'))).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 502);
    assert.match(err.message, /could not authenticate to the provider/);
  });

  it('a failing resource AS on a Messages route: 502 in the Anthropic error format', async () => {
    as.failWith(500, 'server_error', 1);
    const anthropic = new Anthropic({ apiKey: null, authToken: await idp.idToken('dave', 'llm-gateway'), baseURL: gw.url(80, '/xaa'), maxRetries: 0 });
    const err = await anthropic.messages.create({ model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, 502);
    assert.equal((err.error as { type?: string } | undefined)?.type, 'error');
  });
});
