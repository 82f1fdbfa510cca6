import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, discoverAuthorizationServerMetadata, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { jwks, testSigner, type TestSigner } from '../../src/proxy/policies/traffic/jwt-authentication/test-keys.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { startEverything, type Upstream } from './support.ts';

/**
 * OAuth for MCP through the whole pipeline: a ProxyPolicy with `jwtAuthentication.mcp` on the
 * MCP route, fake identity providers on loopback publishing their discovery documents the way
 * Keycloak (realm path), Entra ID (v2.0 path, no PKCE advertised, no DCR) and Auth0 (`audience`)
 * do, and the official SDK client running its discovery flow against the gateway.
 */
const AUDIENCE = 'mcp-api';
const CLIENT_ID = 'switchboard-registered-client';
/** The confidential client's secret at the IdP, in a Secret the policies reference (`clientSecretRef`). */
const CLIENT_SECRET = 'idp-secret: not for clients';

interface TokenRequest {
  readonly path: string;
  readonly form: URLSearchParams;
  readonly authorization: string | undefined;
}

interface FakeIdp {
  readonly origin: string;
  readonly registrations: number;
  readonly tokenRequests: URLSearchParams[];
  /** Requests to the confidential-client tenants' token endpoints (`/realms/secure`, `/oauth2/basic`). */
  readonly secretTokenRequests: TokenRequest[];
  close(): Promise<void>;
}

/** RFC 6749 §2.3.1 as an IdP reads it: Basic base64 of `id:secret`, each part form-urlencoded. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header?.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const formDecode = (s: string): string => decodeURIComponent(s.replace(/\+/g, ' '));
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/** One loopback IdP serving three tenants; each discovery document lives where its vendor puts it. */
async function startIdp(signer: TestSigner): Promise<FakeIdp> {
  const state = { registrations: 0, tokenRequests: [] as URLSearchParams[], secretTokenRequests: [] as TokenRequest[] };
  let origin = '';
  const documents = (): Record<string, Record<string, unknown>> => {
    const kc = `${origin}/realms/demo`;
    const entra = `${origin}/tenant-1/v2.0`;
    const common = (issuer: string) => ({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    });
    return {
      '/realms/demo/.well-known/openid-configuration': { ...common(kc), registration_endpoint: `${kc}/clients-registrations/openid-connect`, code_challenge_methods_supported: ['S256'] },
      // Entra: no registration_endpoint and no code_challenge_methods_supported, as its v2.0 document.
      '/tenant-1/v2.0/.well-known/openid-configuration': common(entra),
      '/.well-known/openid-configuration': { ...common(`${origin}/`), authorization_endpoint: `${origin}/authorize`, code_challenge_methods_supported: ['S256'] },
      // Confidential clients only: the secret in the form body (Keycloak) or only HTTP Basic (Okta-style document).
      '/realms/secure/.well-known/openid-configuration': { ...common(`${origin}/realms/secure`), token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'], code_challenge_methods_supported: ['S256'] },
      '/oauth2/basic/.well-known/oauth-authorization-server': { ...common(`${origin}/oauth2/basic`), token_endpoint_auth_methods_supported: ['client_secret_basic'], code_challenge_methods_supported: ['S256'] },
    };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', origin).pathname;
      const doc = documents()[path];
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (doc) return send(200, doc);
      if (path === '/realms/demo/jwks') return send(200, JSON.parse(jwks(signer)));
      if (path.endsWith('/clients-registrations/openid-connect')) {
        state.registrations++;
        return send(201, { client_id: 'from-the-idp' });
      }
      if ((path === '/realms/secure/token' || path === '/oauth2/basic/token') && req.method === 'POST') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        const authorization = req.headers.authorization;
        state.secretTokenRequests.push({ path, form, authorization });
        const authenticated = path === '/realms/secure/token'
          ? form.get('client_id') === CLIENT_ID && form.get('client_secret') === CLIENT_SECRET
          : basicCredentials(authorization)?.id === CLIENT_ID && basicCredentials(authorization)?.secret === CLIENT_SECRET && !form.has('client_secret');
        if (!authenticated) return send(401, { error: 'invalid_client', error_description: 'client authentication failed' });
        if (form.get('code') === 'bad') return send(400, { error: 'invalid_grant', error_description: 'unknown code' });
        const issuer = `${origin}${path.slice(0, -'/token'.length)}`;
        void signer.sign({ iss: issuer, aud: AUDIENCE, sub: 'bob' }, { expiresIn: '5m' }).then((token) =>
          send(200, { access_token: token, token_type: 'Bearer', expires_in: 300, refresh_token: 'rt-1' }),
        );
        return;
      }
      if (path === '/realms/demo/token' && req.method === 'POST') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        state.tokenRequests.push(form);
        void signer.sign({ iss: `${origin}/realms/demo`, aud: AUDIENCE, sub: 'alice' }, { expiresIn: '5m' }).then((token) =>
          send(200, { access_token: token, token_type: 'Bearer', expires_in: 300 }),
        );
        return;
      }
      send(404, { error: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    get registrations() {
      return state.registrations;
    },
    tokenRequests: state.tokenRequests,
    secretTokenRequests: state.secretTokenRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An in-memory OAuth client, as an MCP host keeps one per server; the browser step is recorded. */
class MemoryOAuthClient implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  get redirectUrl(): string {
    return 'http://127.0.0.1:9/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'switchboard-test', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

function route(name: string, prefix: string, backendName = 'everything'): string {
  return `---\n${stringify({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: prefix } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: backendName }] }],
    },
  })}`;
}

function policy(routeName: string, issuer: string, keys: string, mcp: Record<string, unknown>): string {
  return `---\n${stringify({
    apiVersion: 'switchboard.dev/v1alpha1',
    kind: 'ProxyPolicy',
    metadata: { name: routeName, namespace: 'default' },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: routeName }],
      traffic: { jwtAuthentication: { providers: [{ issuer, audiences: [AUDIENCE], jwks: { inline: keys } }], mcp } },
    },
  })}`;
}

describe('MCP OAuth through the gateway', () => {
  let signer: TestSigner;
  let idp: FakeIdp;
  let upstream: Upstream;
  let gw: GatewayHarness;

  before(async () => {
    signer = await testSigner('RS256', 'idp-key');
    [idp, upstream] = await Promise.all([startIdp(signer), startEverything()]);
    const keys = jwks(signer);
    gw = await startGateway(
      `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: switchboard }
spec: { controllerName: switchboard.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: switchboard
  listeners: [{ name: http, port: 80, protocol: HTTP }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: everything, namespace: default }
spec:
  mcp:
    targets: [{ name: everything, static: { host: 127.0.0.1, port: ${upstream.port} } }]
` +
        route('keycloak', '/kc/mcp') +
        policy('keycloak', `${idp.origin}/realms/demo`, keys, { provider: 'idp_2', clientId: CLIENT_ID, resourceMetadata: { scopes_supported: ['openid', 'mcp'] } }) +
        route('entra', '/entra/mcp') +
        policy('entra', `${idp.origin}/tenant-1/v2.0`, keys, { provider: 'idp_6', clientId: CLIENT_ID }) +
        route('auth0', '/auth0/mcp') +
        policy('auth0', `${idp.origin}/`, keys, { provider: 'idp_1' }) +
        route('plain', '/plain/mcp') +
        policy('plain', `${idp.origin}/realms/demo`, keys, {}) +
        `---
apiVersion: v1
kind: Secret
metadata: { name: idp-client, namespace: default }
stringData: { clientSecret: ${JSON.stringify(CLIENT_SECRET)}, other: wrong }
` +
        route('secure', '/secure/mcp') +
        policy('secure', `${idp.origin}/realms/secure`, keys, { provider: 'idp_2', clientId: CLIENT_ID, clientSecretRef: { name: 'idp-client' } }) +
        `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: legacy-auth, namespace: default }
spec:
  mcp:
    targets: [{ name: everything, static: { host: 127.0.0.1, port: ${upstream.port} } }]
  policies:
    mcp:
      authentication:
        issuer: ${idp.origin}/realms/demo
        audiences: [${AUDIENCE}]
        jwks: { url: ${idp.origin}/realms/demo/jwks }
        provider: idp_2
        clientId: ${CLIENT_ID}
` +
        route('legacy', '/legacy/mcp', 'legacy-auth') +
        route('legacy-own', '/legacy-own/mcp', 'legacy-auth') +
        policy('legacy-own', `${idp.origin}/tenant-1/v2.0`, keys, {}) +
        route('basic', '/basic/mcp') +
        policy('basic', `${idp.origin}/oauth2/basic`, keys, { provider: 'idp_3', clientId: CLIENT_ID, clientSecretRef: { name: 'idp-client' } }),
    );
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([idp?.close(), upstream?.stop()]);
  });

  it('runs the SDK client flow: 401 → resource metadata → AS metadata → DCR short-circuit → token → tools', async () => {
    const serverUrl = new URL(gw.url(80, '/kc/mcp'));
    const oauth = new MemoryOAuthClient();
    const first = new Client({ name: 'switchboard-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: oauth });
    await assert.rejects(first.connect(transport), UnauthorizedError);

    assert.equal(oauth.client?.client_id, CLIENT_ID, 'registration answered by the gateway');
    assert.equal(idp.registrations, 0, 'the IdP registration endpoint was never called');
    const authorize = oauth.authorizationUrl!;
    assert.equal(`${authorize.origin}${authorize.pathname}`, `${idp.origin}/realms/demo/authorize`);
    assert.equal(authorize.searchParams.get('client_id'), CLIENT_ID);
    assert.equal(authorize.searchParams.get('resource'), serverUrl.href);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');

    await transport.finishAuth('code-from-the-browser');
    assert.equal(idp.tokenRequests.at(-1)?.get('code'), 'code-from-the-browser');
    assert.ok(oauth.saved?.access_token);

    const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: oauth }));
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'echo'), tools.tools.map((t) => t.name).join(','));
    } finally {
      await client.close();
    }
  });

  it('clientSecretRef: the SDK flow completes through the gateway token endpoint, which adds the secret (client_secret_post)', async () => {
    const serverUrl = new URL(gw.url(80, '/secure/mcp'));
    const metadata = await discoverAuthorizationServerMetadata(serverUrl);
    assert.equal(metadata?.token_endpoint, gw.url(80, '/.well-known/oauth-token/secure/mcp'));
    assert.deepEqual(metadata?.token_endpoint_auth_methods_supported, ['none']);

    const oauth = new MemoryOAuthClient();
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: oauth });
    await assert.rejects(new Client({ name: 'switchboard-test', version: '1.0.0' }).connect(transport), UnauthorizedError);
    assert.equal(oauth.client?.client_id, CLIENT_ID);
    assert.equal(oauth.client?.client_secret, undefined, 'the client never learns the secret');
    const before = idp.secretTokenRequests.length;
    await transport.finishAuth('code-for-bob');
    const seen = idp.secretTokenRequests.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].path, '/realms/secure/token');
    assert.equal(seen[0].form.get('client_secret'), CLIENT_SECRET, 'the secret arrives in the form body');
    assert.equal(seen[0].form.get('client_id'), CLIENT_ID);
    assert.equal(seen[0].form.get('code'), 'code-for-bob');
    assert.equal(seen[0].form.get('code_verifier'), oauth.verifier, 'the PKCE verifier is passed on');
    assert.equal(seen[0].authorization, undefined);
    assert.ok(oauth.saved?.access_token);

    const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: oauth }));
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'echo'));
    } finally {
      await client.close();
    }
  });

  it('clientSecretRef: HTTP Basic when the IdP only supports client_secret_basic; refresh_token is proxied too', async () => {
    const endpoint = String((await discoverAuthorizationServerMetadata(new URL(gw.url(80, '/basic/mcp'))))?.token_endpoint);
    assert.equal(endpoint, gw.url(80, '/.well-known/oauth-token/basic/mcp'));
    const grants: Record<string, string>[] = [{ grant_type: 'authorization_code', code: 'c1', code_verifier: 'v'.repeat(43), redirect_uri: 'http://127.0.0.1:9/callback' }, { grant_type: 'refresh_token', refresh_token: 'rt-1' }];
    for (const grant of grants) {
      const before = idp.secretTokenRequests.length;
      const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...grant, client_id: CLIENT_ID }) });
      assert.equal(res.status, 200, grant.grant_type);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.ok(((await res.json()) as { access_token?: string }).access_token, grant.grant_type);
      const seen = idp.secretTokenRequests.slice(before);
      assert.equal(seen.length, 1);
      assert.deepEqual(basicCredentials(seen[0].authorization), { id: CLIENT_ID, secret: CLIENT_SECRET }, `${grant.grant_type}: Basic credentials`);
      assert.equal(seen[0].form.get('client_secret'), null);
      assert.equal(seen[0].form.get('grant_type'), grant.grant_type);
    }
  });

  it('clientSecretRef: the token endpoint refuses what would let anyone use the confidential client', async () => {
    const endpoint = gw.url(80, '/.well-known/oauth-token/secure/mcp');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const cases = [
      { name: 'client_credentials grant', init: { method: 'POST', headers: form, body: `grant_type=client_credentials&client_id=${CLIENT_ID}` }, status: 400, error: 'unsupported_grant_type' },
      { name: 'password grant', init: { method: 'POST', headers: form, body: 'grant_type=password&username=a&password=b' }, status: 400, error: 'unsupported_grant_type' },
      { name: 'another client_id', init: { method: 'POST', headers: form, body: 'grant_type=authorization_code&code=x&client_id=someone-else' }, status: 401, error: 'invalid_client' },
      { name: 'a JSON body', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"authorization_code"}' }, status: 400, error: 'invalid_request' },
      { name: 'GET', init: { method: 'GET' }, status: 405, error: 'invalid_request' },
    ];
    const before = idp.secretTokenRequests.length;
    for (const c of cases) {
      const res = await fetch(endpoint, c.init);
      assert.equal(res.status, c.status, c.name);
      assert.equal(((await res.json()) as { error?: string }).error, c.error, c.name);
    }
    assert.equal(idp.secretTokenRequests.length, before, 'the IdP was never called');
    const guessed = await fetch(endpoint, { method: 'POST', headers: form, body: 'grant_type=authorization_code&code=x&client_secret=guess' });
    assert.equal(guessed.status, 200, 'a client_secret the caller brings is replaced by the configured one');
    assert.equal(idp.secretTokenRequests.at(-1)?.form.getAll('client_secret').join(), CLIENT_SECRET);
    // The IdP's own refusal passes through unchanged.
    const refused = await fetch(endpoint, { method: 'POST', headers: form, body: 'grant_type=authorization_code&code=bad' });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error: 'invalid_grant', error_description: 'unknown code' });
    // Routes without clientSecretRef have no token endpoint of ours.
    assert.equal((await fetch(gw.url(80, '/.well-known/oauth-token/kc/mcp'), { method: 'POST', headers: form, body: 'grant_type=refresh_token' })).status, 404);
  });

  it('deprecated backend policies.mcp.authentication: served as jwtAuthentication.mcp on its routes; a route\'s own jwtAuthentication wins', async () => {
    const accepted = (gw.statusOf('ProxyBackend', 'legacy-auth') as { conditions: { type: string; status: string; message: string }[] }).conditions.find((c) => c.type === 'Accepted');
    assert.equal(accepted?.status, 'True');
    assert.match(accepted?.message ?? '', /deprecated/);
    const missing = await gw.request(80, { method: 'POST', path: '/legacy/mcp', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(missing.status, 401);
    assert.equal(missing.headers['www-authenticate'], `Bearer resource_metadata="${gw.url(80, '/.well-known/oauth-protected-resource/legacy/mcp')}"`);
    const doc = await (await fetch(gw.url(80, '/.well-known/oauth-protected-resource/legacy/mcp'))).json() as { authorization_servers: string[] };
    assert.deepEqual(doc.authorization_servers, [gw.url(80, '/legacy/mcp')], 'fronted: provider and clientId came along');

    const token = await signer.sign({ iss: `${idp.origin}/realms/demo`, aud: AUDIENCE, sub: 'carol' }, { expiresIn: '5m' });
    const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url(80, '/legacy/mcp')), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'echo'), 'a JWT from the configured issuer passes (remote JWKS)');
    } finally {
      await client.close();
    }

    // The route with its own ProxyPolicy (another issuer, mcp without provider/clientId): that policy decides.
    const own = await gw.request(80, { method: 'POST', path: '/legacy-own/mcp', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(own.status, 401, 'the backend\'s issuer is not accepted where the route has its own jwtAuthentication');
    assert.match(String(own.headers['www-authenticate']), /error_description="the token issuer is not accepted"/);
    const ownDoc = await (await fetch(gw.url(80, '/.well-known/oauth-protected-resource/legacy-own/mcp'))).json() as { authorization_servers: string[] };
    assert.deepEqual(ownDoc.authorization_servers, [`${idp.origin}/tenant-1/v2.0`], 'the route policy\'s issuer, not fronted');
  });

  it('challenges with resource_metadata, and names the error when a token was rejected', async () => {
    const missing = await gw.request(80, { method: 'POST', path: '/kc/mcp', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(missing.status, 401);
    const metadataUrl = gw.url(80, '/.well-known/oauth-protected-resource/kc/mcp');
    assert.equal(missing.headers['www-authenticate'], `Bearer resource_metadata="${metadataUrl}"`);

    const forged = await (await testSigner('RS256', 'idp-key')).sign({ iss: `${idp.origin}/realms/demo`, aud: AUDIENCE }, { expiresIn: '5m' });
    const rejected = await gw.request(80, { method: 'POST', path: '/kc/mcp', headers: { authorization: `Bearer ${forged}` }, body: '{}' });
    assert.equal(rejected.status, 401);
    assert.match(String(rejected.headers['www-authenticate']), new RegExp(`^Bearer resource_metadata="${metadataUrl}", error="invalid_token", error_description="[^"]+"$`));
  });

  it('serves the protected-resource document with resourceMetadata merged in', async () => {
    const res = await fetch(gw.url(80, '/.well-known/oauth-protected-resource/kc/mcp'));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      resource: gw.url(80, '/kc/mcp'),
      authorization_servers: [gw.url(80, '/kc/mcp')],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'mcp'],
    });
  });

  it('points at the issuer itself when neither provider nor clientId asks the gateway to front it', async () => {
    const res = await fetch(gw.url(80, '/.well-known/oauth-protected-resource/plain/mcp'));
    assert.deepEqual(((await res.json()) as { authorization_servers: unknown }).authorization_servers, [`${idp.origin}/realms/demo`]);
    assert.equal((await fetch(gw.url(80, '/.well-known/oauth-authorization-server/plain/mcp'))).status, 404);
  });

  it('Entra ID: finds the v2.0 document, advertises PKCE S256 and the gateway registration endpoint', async () => {
    const metadata = await discoverAuthorizationServerMetadata(gw.url(80, '/entra/mcp'));
    assert.equal(metadata?.issuer, `${idp.origin}/tenant-1/v2.0`);
    assert.deepEqual(metadata?.code_challenge_methods_supported, ['S256']);
    assert.equal(metadata?.registration_endpoint, gw.url(80, '/.well-known/oauth-registration/entra/mcp'));
    assert.equal(metadata?.token_endpoint, `${idp.origin}/tenant-1/v2.0/token`);
  });

  it('Auth0: the authorization endpoint redirects to the IdP with the audience added', async () => {
    const metadata = await discoverAuthorizationServerMetadata(gw.url(80, '/auth0/mcp'));
    const endpoint = String(metadata?.authorization_endpoint);
    assert.equal(endpoint, gw.url(80, '/.well-known/oauth-authorize/auth0/mcp'));
    const res = await fetch(`${endpoint}?client_id=c1&resource=${encodeURIComponent(gw.url(80, '/auth0/mcp'))}`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const location = new URL(String(res.headers.get('location')));
    assert.equal(`${location.origin}${location.pathname}`, `${idp.origin}/authorize`);
    assert.equal(location.searchParams.get('client_id'), 'c1');
    assert.equal(location.searchParams.get('audience'), AUDIENCE);
    // No clientId: registration is the IdP's business, not the gateway's.
    assert.equal((await fetch(gw.url(80, '/.well-known/oauth-registration/auth0/mcp'), { method: 'POST', body: '{}' })).status, 404);
  });

  it('rejects a registration body that is not a JSON object', async () => {
    const res = await fetch(gw.url(80, '/.well-known/oauth-registration/kc/mcp'), { method: 'POST', body: '[1]' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: unknown }).error, 'invalid_client_metadata');
  });

  it('leaves well-known paths of resources without MCP OAuth to routing', async () => {
    assert.equal((await gw.request(80, { path: '/.well-known/oauth-protected-resource/elsewhere' })).status, 404);
  });
});
