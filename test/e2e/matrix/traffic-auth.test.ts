/**
 * Member × kind matrix, traffic members that admit or refuse: extAuth (allow, deny, FailClosed with
 * its service down), authorization, jwtAuthentication, basicAuthentication, apiKeyAuthentication,
 * csrf — on a Service, an `ai` and an `mcp` backend. Every refusal is asserted in the client's
 * format (gateway JSON, OpenAI's and Anthropic's error objects, JSON-RPC) with the upstream seeing
 * nothing (support.ts says how the matrix is built).
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { HeaderValueOption_HeaderAppendAction } from '../../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema, type CheckRequest } from '../../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { StatusCode } from '../../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { jwks, testSigner, type TestSigner } from '../../../src/proxy/policies/traffic/jwt-authentication/test-keys.ts';
import { closedPort, startGrpcServer, type RunningServer } from '../../ext/servers.ts';
import { startEchoServer, type EchoServer } from '../../support/echo-server.ts';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { htpasswdLines } from '../../support/htpasswd.ts';
import { startMcpTarget, startProvider, type RecordingServer } from './doubles.ts';
import {
  assertAnthropicError, assertGatewayError, assertJsonRpcRefusal, assertOpenAIError, Clients, failure, header, last, matrixYaml, nothingReaches, perKind, runRows, secret, type Row, type Variant,
} from './support.ts';

const ISSUER = 'https://idp.matrix.test';
const EVIL = 'https://evil.example';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const overwrite = (key: string, value: string) => ({ header: { key, value }, appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD });


/** ext_authz: `x-user: mallory` is denied with 401; everyone else is allowed and gets `x-auth-user`. */
function startAuthz(seen: CheckRequest[]): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(Authorization, {
    check(req) {
      seen.push(req);
      const user = req.attributes?.request?.http?.headers['x-user'] ?? '';
      if (user === 'mallory') {
        return create(CheckResponseSchema, { status: { code: 7 }, httpResponse: { case: 'deniedResponse', value: { status: { code: StatusCode.Unauthorized }, body: 'not you' } } });
      }
      return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: { headers: [overwrite('x-auth-user', user)] } } });
    },
  }));
}

describe('member × kind matrix: extAuth, authorization, jwt, basic, apiKey, csrf', () => {
  let echo: EchoServer;
  let provider: RecordingServer;
  let target: RecordingServer;
  let authz: RunningServer;
  let signer: TestSigner;
  let token: string;
  let gw: GatewayHarness;
  let clients: Clients;
  const checks: CheckRequest[] = [];

  before(async () => {
    [echo, provider, target, authz, signer] = await Promise.all([startEchoServer('echo'), startProvider(), startMcpTarget(), startAuthz(checks), testSigner('ES256', 'matrix')]);
    token = await signer.sign({ iss: ISSUER, sub: 'alice' }, { expiresIn: '1h' });
    const dead = await closedPort();
    const variants: Variant[] = [
      { name: 'extauth', traffic: { extAuth: { url: authz.url, grpc: {} } } },
      { name: 'extauth-down', traffic: { extAuth: { url: `http://127.0.0.1:${dead}`, grpc: {}, failureMode: 'FailClosed' } } },
      { name: 'authorization', traffic: { authorization: { action: 'Allow', policy: { matchExpressions: ['request.headers["x-user"] == "alice"'] } } } },
      { name: 'jwt', traffic: { jwtAuthentication: { providers: [{ issuer: ISSUER, jwks: { inline: jwks(signer) } }] } } },
      { name: 'basic', traffic: { basicAuthentication: { users: htpasswdLines('alice-bob.htpasswd') } } },
      { name: 'apikey', traffic: { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } } },
      { name: 'csrf', traffic: { csrf: { additionalOrigins: ['https://app.example.com'] } } },
    ];
    gw = await startGateway(matrixYaml({ echo, provider, target }, variants, secret('client-keys', { team: 'sk-good' })));
    assert.deepEqual(gw.applyErrors, []);
    clients = new Clients(gw);
  });
  after(async () => {
    await clients?.close();
    await gw?.close();
    await Promise.all([echo?.close(), provider?.stop(), target?.stop(), authz?.close()]);
  });

  const rows: Row[] = [
    ...perKind('extAuth allow (checked; the service\'s header reaches the upstream)', {
      svc: async () => {
        const res = await clients.svc('extauth', { headers: { 'x-user': 'alice' } });
        assert.equal(res.status, 200);
        assert.equal(res.echo().headers['x-auth-user'], 'alice');
      },
      ai: async () => {
        const checked = checks.length;
        assert.equal((await clients.chat('extauth', { headers: { 'x-user': 'alice' } })).text, 'hello');
        assert.equal(checks.length, checked + 1, 'the service was asked');
        assert.equal(header(last(provider).headers, 'x-auth-user'), 'alice');
      },
      mcp: async () => {
        const checked = checks.length;
        assert.equal((await clients.callTool('extauth', { 'x-user': 'alice' })).text, 'matrix');
        assert.ok(checks.length > checked, 'the service was asked');
        assert.equal(header(last(target).headers, 'x-auth-user'), 'alice');
      },
    }),
    ...perKind('extAuth deny (the service\'s status, nothing upstream)', {
      svc: async () => {
        const res = await nothingReaches(echo, () => clients.svc('extauth', { headers: { 'x-user': 'mallory' } }));
        assert.equal(res.status, 401);
        assert.equal(res.text, 'not you');
      },
      ai: async () => {
        const err = await nothingReaches(provider, () => failure(clients.chat('extauth', { headers: { 'x-user': 'mallory' } })));
        assert.equal((err as { status?: number }).status, 401, String(err));
      },
      mcp: async () => {
        const err = await nothingReaches(target, () => failure(clients.mcp('extauth', { 'x-user': 'mallory' })));
        assert.equal((err as { code?: number }).code, 401, String(err));
      },
    }),
    ...perKind('extAuth FailClosed with its service down (403, nothing upstream)', {
      svc: async () => assertGatewayError(await nothingReaches(echo, () => clients.svc('extauth-down')), 403, 'ext_auth_unavailable'),
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('extauth-down'))), 403, 'permission_error', 'ext_auth_unavailable');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('extauth-down'))), 403, 'permission_error');
      },
      mcp: async () => assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('extauth-down'))), 403, -32001, 'ext_auth_unavailable'),
    }),
    ...perKind('authorization (Allow rule: 403 when none matches, nothing upstream)', {
      svc: async () => {
        assertGatewayError(await nothingReaches(echo, () => clients.svc('authorization', { headers: { 'x-user': 'bob' } })), 403, 'forbidden');
        assert.equal((await clients.svc('authorization', { headers: { 'x-user': 'alice' } })).status, 200);
      },
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('authorization', { headers: { 'x-user': 'bob' } }))), 403, 'permission_error', 'forbidden');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('authorization', { headers: { 'x-user': 'bob' } }))), 403, 'permission_error');
        assert.equal((await clients.chat('authorization', { headers: { 'x-user': 'alice' } })).text, 'hello');
      },
      mcp: async () => {
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('authorization', { 'x-user': 'bob' }))), 403, -32001, 'forbidden');
        assert.equal((await clients.callTool('authorization', { 'x-user': 'alice' })).text, 'matrix');
      },
    }),
    ...perKind('jwtAuthentication (Strict: 401 without a valid token, nothing upstream)', {
      svc: async () => {
        const res = await nothingReaches(echo, () => clients.svc('jwt'));
        assertGatewayError(res, 401, 'unauthorized');
        assert.match(String(res.headers['www-authenticate']), /^Bearer/);
        assert.equal((await clients.svc('jwt', { headers: { authorization: `Bearer ${token}` } })).status, 200);
      },
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('jwt', { apiKey: 'not-a-jwt' }))), 401, 'authentication_error', 'unauthorized');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('jwt'))), 401, 'authentication_error');
        assert.equal((await clients.chat('jwt', { apiKey: token })).text, 'hello');
      },
      mcp: async () => {
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('jwt'))), 401, -32001, 'unauthorized');
        assert.equal((await clients.callTool('jwt', { authorization: `Bearer ${token}` })).text, 'matrix');
      },
    }),
    ...perKind('basicAuthentication (401 with the realm, nothing upstream)', {
      svc: async () => {
        const res = await nothingReaches(echo, () => clients.svc('basic', { headers: { authorization: basic('alice', 'wrong') } }));
        assertGatewayError(res, 401, 'unauthorized');
        assert.match(String(res.headers['www-authenticate']), /^Basic realm="Restricted"/);
        assert.equal((await clients.svc('basic', { headers: { authorization: basic('alice', 'open:sesame') } })).status, 200);
      },
      ai: async () => {
        const err = await nothingReaches(provider, () => failure(clients.chat('basic', { headers: { authorization: basic('alice', 'wrong') } })));
        assertOpenAIError(err, 401, 'authentication_error', 'unauthorized');
        assert.match((err as { headers?: Headers }).headers?.get('www-authenticate') ?? '', /^Basic realm="Restricted"/);
        assert.equal((await clients.chat('basic', { headers: { authorization: basic('bob', 'open:sesame') } })).text, 'hello');
      },
      mcp: async () => {
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('basic', { authorization: basic('alice', 'wrong') }))), 401, -32001, 'unauthorized');
        assert.equal((await clients.callTool('basic', { authorization: basic('alice', 'open:sesame') })).text, 'matrix');
      },
    }),
    ...perKind('apiKeyAuthentication (401 for an unknown key, nothing upstream)', {
      svc: async () => {
        assertGatewayError(await nothingReaches(echo, () => clients.svc('apikey', { headers: { authorization: 'Bearer sk-wrong' } })), 401, 'unauthorized');
        assert.equal((await clients.svc('apikey', { headers: { authorization: 'Bearer sk-good' } })).status, 200);
      },
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('apikey', { apiKey: 'sk-wrong' }))), 401, 'authentication_error', 'unauthorized');
        assertAnthropicError(await nothingReaches(provider, () => failure(clients.message('apikey', { apiKey: 'sk-wrong' }))), 401, 'authentication_error');
        assert.equal((await clients.chat('apikey', { apiKey: 'sk-good' })).text, 'hello');
        assert.equal(await clients.message('apikey', { apiKey: 'sk-good' }), 'hello', 'the Anthropic SDK\'s x-api-key is read on a Messages route');
      },
      mcp: async () => {
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('apikey', { authorization: 'Bearer sk-wrong' }))), 401, -32001, 'unauthorized');
        assert.equal((await clients.callTool('apikey', { authorization: 'Bearer sk-good' })).text, 'matrix');
      },
    }),
    ...perKind('csrf (a cross-site POST is refused, nothing upstream)', {
      svc: async () => {
        const res = await nothingReaches(echo, () => clients.svc('csrf', { method: 'POST', body: '{}', headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' } }));
        assertGatewayError(res, 403, 'csrf_rejected');
        assert.equal((await clients.svc('csrf', { method: 'POST', body: '{}' })).status, 200, 'without Origin or Sec-Fetch-Site it passes');
      },
      ai: async () => {
        assertOpenAIError(await nothingReaches(provider, () => failure(clients.chat('csrf', { headers: { origin: EVIL, 'sec-fetch-site': 'cross-site' } }))), 403, 'permission_error', 'csrf_rejected');
        assert.equal((await clients.chat('csrf', { headers: { origin: 'https://app.example.com', 'sec-fetch-site': 'cross-site' } })).text, 'hello', 'an additional origin passes');
      },
      mcp: async () => {
        assertJsonRpcRefusal(await nothingReaches(target, () => failure(clients.mcp('csrf', { origin: EVIL, 'sec-fetch-site': 'cross-site' }))), 403, -32001, 'csrf_rejected');
        assert.equal((await clients.callTool('csrf', { origin: 'https://app.example.com', 'sec-fetch-site': 'cross-site' })).text, 'matrix');
      },
    }),
  ];
  runRows(rows);
});
