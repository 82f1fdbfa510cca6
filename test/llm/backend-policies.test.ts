/**
 * The backend-policy layer on `ai` backends, with the official SDKs against a listening gateway:
 * backend extAuth (FailClosed with its service down refuses and the provider sees nothing;
 * FailOpen passes; a running service allows and denies), an unresolvable `auth.secretRef` fails
 * closed (500, nothing sent — on providerG not even with the process's own cloud-A keys), and the
 * client's credentials stay home on chat, messages and passthrough routes unless `auth.passthrough`
 * asks for them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { create } from '@bufbuild/protobuf';
import { HeaderValueOption_HeaderAppendAction } from '../../src/proxy/ext/gen/envoy/config/core/v3/base_pb.js';
import { Authorization, CheckResponseSchema } from '../../src/proxy/ext/gen/envoy/service/auth/v3/external_auth_pb.js';
import { StatusCode } from '../../src/proxy/ext/gen/envoy/type/v3/http_status_pb.js';
import { closedPort, startGrpcServer, type RunningServer } from '../ext/servers.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { responseFixture, startMockProvider, type MockProvider, type RecordedRequest } from './mock-provider.ts';

const ROUTES = '{ /chat/completions: Completions, /messages: Messages, /files: Passthrough }';
const OPERATOR_KEY = 'sk-operator';
const CLIENT_KEY = 'sk-client-team';
const AWS_ENV = { AWS_ACCESS_KEY_ID: 'AKIDAMBIENT', AWS_SECRET_ACCESS_KEY: 'ambient-secret', AWS_REGION: 'us-west-2' } as const;

/** ext_authz: `x-user: mallory` is denied 401; everyone else is allowed with `x-backend-auth: <user>` upstream. */
function startAuthz(): Promise<RunningServer> {
  return startGrpcServer((router) => router.service(Authorization, {
    check(req) {
      const user = req.attributes?.request?.http?.headers['x-user'] ?? '';
      if (user === 'mallory') return create(CheckResponseSchema, { status: { code: 7 }, httpResponse: { case: 'deniedResponse', value: { status: { code: StatusCode.Unauthorized }, body: 'not you' } } });
      const header = { header: { key: 'x-backend-auth', value: user }, appendAction: HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD };
      return create(CheckResponseSchema, { status: { code: 0 }, httpResponse: { case: 'okResponse', value: { headers: [header] } } });
    },
  }));
}

/** One HTTPRoute `/<name>` to the ProxyBackend `<name>`, whose provider (YAML) sits at `at`, with its inline `policies` and optional ProxyPolicies. */
function backend(name: string, provider: string, at: MockProvider, policies: string, extra: { backendPolicy?: string; traffic?: string } = {}): string {
  return `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /${name} } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { ${provider}, host: ${at.host}, port: ${at.port} }
  policies: { ai: { routes: ${ROUTES} }${policies ? `, ${policies}` : ''} }
${extra.backendPolicy ? `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}-backend }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${name} }]
  backend: ${extra.backendPolicy}
` : ''}${extra.traffic ? `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}-traffic }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${name} }]
  traffic: ${extra.traffic}
` : ''}`;
}

/** The error an SDK call rejected with (fails when it resolved). */
async function failure(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  assert.fail('the call succeeded');
}

async function nothingReaches<T>(provider: MockProvider, action: () => Promise<T>): Promise<T> {
  const before = provider.requests.length;
  const result = await action();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(provider.requests.length, before, 'the provider saw nothing');
  return result;
}

function assertOpenAIError(err: unknown, status: number, type: string, code?: string): void {
  assert.ok(err instanceof OpenAI.APIError, `not an OpenAI APIError: ${String(err)}`);
  assert.equal(err.status, status, String(err));
  const body = err.error as { type?: string; code?: string } | undefined;
  assert.equal(body?.type, type, JSON.stringify(err.error));
  if (code !== undefined) assert.equal(body?.code, code, JSON.stringify(err.error));
}

function assertAnthropicError(err: unknown, status: number, type: string): void {
  assert.ok(err instanceof Anthropic.APIError, `not an Anthropic APIError: ${String(err)}`);
  assert.equal(err.status, status, String(err));
  const body = err.error as { type?: string; error?: { type?: string } } | undefined;
  assert.equal(body?.type, 'error', JSON.stringify(err.error));
  assert.equal(body?.error?.type, type, JSON.stringify(err.error));
}

/** The client's credentials in every place a client puts them; `x-team-key` is the one the API-key policy reads. */
const CLIENT_CREDENTIALS = { 'x-team-key': CLIENT_KEY, 'x-api-key': 'sk-client-x', 'api-key': 'sk-client-azure', cookie: 'session=client' };

describe('backend policies on ai backends (official SDKs)', () => {
  let up: MockProvider;
  let bedrock: MockProvider;
  let authz: RunningServer;
  let gw: GatewayHarness;
  const savedEnv: Record<string, string | undefined> = {};

  const openai = (name: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}) =>
    new OpenAI({ apiKey: opts.apiKey ?? 'sk-anything', baseURL: gw.url(80, `/${name}`), maxRetries: 0, defaultHeaders: opts.headers });
  const anthropic = (name: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}) =>
    new Anthropic({ apiKey: opts.apiKey ?? 'sk-anything', baseURL: gw.url(80, `/${name}`), maxRetries: 0, defaultHeaders: opts.headers });
  const chat = (name: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}) =>
    openai(name, opts).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const message = (name: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}) =>
    anthropic(name, opts).messages.create({ model: 'gpt-4o', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  /** A Passthrough route: the SDK's file listing, forwarded as it is. */
  const passthrough = (name: string, opts: { apiKey?: string; headers?: Record<string, string> } = {}) => openai(name, opts).files.list();
  const last = (): RecordedRequest => {
    const r = up.requests.at(-1);
    assert.ok(r, 'the provider saw a request');
    return r;
  };

  before(async () => {
    for (const [k, v] of Object.entries(AWS_ENV)) {
      savedEnv[k] = process.env[k];
      process.env[k] = v;
    }
    [up, bedrock, authz] = await Promise.all([startMockProvider(), startMockProvider(), startAuthz()]);
    up.answer('/', responseFixture('openai-tool-calls'));
    up.answer('/passthrough/files', { body: { object: 'list', data: [] } });
    up.answer('/keyed/files', { body: { object: 'list', data: [] } });
    bedrock.answer('/', responseFixture('bedrock-reasoning-tool'));
    const dead = await closedPort();
    const key = `auth: { key: ${OPERATOR_KEY} }`;
    const apiKeyPolicy = '{ apiKeyAuthentication: { secretRef: { name: client-keys }, location: { header: { name: x-team-key } } } }';
    gw = await startGateway(`${httpGateway()}---
apiVersion: v1
kind: Secret
metadata: { name: client-keys }
stringData: { team: ${CLIENT_KEY} }
${backend('closed', 'providerA: {}', up, key, { backendPolicy: `{ extAuth: { url: "http://127.0.0.1:${dead}", grpc: {}, failureMode: FailClosed } }` })}${backend('open', 'providerA: {}', up, key, { backendPolicy: `{ extAuth: { url: "http://127.0.0.1:${dead}", grpc: {}, failureMode: FailOpen } }` })}${backend('authz', 'providerA: {}', up, key, { backendPolicy: `{ extAuth: { url: "${authz.url}", grpc: {} } }` })}${backend('missing', 'providerA: {}', up, 'auth: { secretRef: { name: no-such-secret } }')}${backend('missing-g', 'providerG: { region: us-west-2, model: "anthropic.claude-3-5-sonnet-20241022-v2:0" }', bedrock, 'auth: { cloudA: { secretRef: { name: no-such-secret } } }')}${backend('keyed', 'providerA: {}', up, key, { traffic: apiKeyPolicy })}${backend('passthrough', 'providerA: {}', up, 'auth: { passthrough: {} }', { traffic: apiKeyPolicy })}`);
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await gw?.close();
    await Promise.all([up?.stop(), bedrock?.stop(), authz?.close()]);
  });

  const rows: { name: string; run: () => Promise<void> }[] = [
    {
      name: 'extAuth FailClosed, service down: 403 in OpenAI\'s format, the provider sees nothing',
      run: async () => assertOpenAIError(await nothingReaches(up, () => failure(chat('closed'))), 403, 'permission_error', 'ext_auth_unavailable'),
    },
    {
      name: 'extAuth FailClosed, service down: a typed permission_error for an Anthropic client',
      run: async () => assertAnthropicError(await nothingReaches(up, () => failure(message('closed'))), 403, 'permission_error'),
    },
    {
      name: 'extAuth FailOpen, service down: the request goes on',
      run: async () => {
        const before = up.requests.length;
        await chat('open');
        assert.equal(up.requests.length, before + 1);
      },
    },
    {
      name: 'extAuth allow: the provider gets the request with the service\'s header',
      run: async () => {
        await chat('authz', { headers: { 'x-user': 'alice' } });
        assert.equal(last().headers['x-backend-auth'], 'alice');
        assert.equal(last().headers.authorization, `Bearer ${OPERATOR_KEY}`);
      },
    },
    {
      name: 'extAuth deny: the service\'s status reaches the client, the provider sees nothing',
      run: async () => {
        const err = await nothingReaches(up, () => failure(chat('authz', { headers: { 'x-user': 'mallory' } })));
        assert.ok(err instanceof OpenAI.APIError, String(err));
        assert.equal(err.status, 401);
      },
    },
    {
      name: 'auth.secretRef naming a missing Secret (key provider): 500 policy_invalid, nothing sent',
      run: async () => {
        assertOpenAIError(await nothingReaches(up, () => failure(chat('missing'))), 500, 'server_error', 'policy_invalid');
        assertAnthropicError(await nothingReaches(up, () => failure(message('missing'))), 500, 'api_error');
      },
    },
    {
      name: 'auth.cloudA.secretRef naming a missing Secret (providerG, ambient AWS keys set): 500, nothing signed or sent',
      run: async () => assertOpenAIError(await nothingReaches(bedrock, () => failure(chat('missing-g'))), 500, 'server_error', 'policy_invalid'),
    },
    ...(['chat', 'message', 'passthrough'] as const).map((route) => ({
      name: `client credentials stay home on ${route} (Authorization, x-api-key, api-key, cookie, the API-key policy's header)`,
      run: async () => {
        const call = { chat, message, passthrough }[route];
        await call('keyed', { apiKey: 'sk-client-bearer', headers: CLIENT_CREDENTIALS });
        const seen = last().headers;
        if (route === 'message') assert.equal(seen.authorization, `Bearer ${OPERATOR_KEY}`, 'the operator key, translated for the OpenAI provider');
        else assert.equal(seen.authorization, `Bearer ${OPERATOR_KEY}`);
        for (const name of ['x-team-key', 'x-api-key', 'api-key', 'cookie']) assert.equal(seen[name], undefined, `${name} not forwarded`);
      },
    })),
    ...(['chat', 'passthrough'] as const).map((route) => ({
      name: `auth.passthrough re-sends the validated client key on ${route}`,
      run: async () => {
        const call = { chat, passthrough }[route];
        await call('passthrough', { headers: CLIENT_CREDENTIALS });
        assert.equal(last().headers.authorization, `Bearer ${CLIENT_KEY}`);
        if (route === 'passthrough') assert.equal(last().headers['x-api-key'], 'sk-client-x', 'with passthrough the client\'s headers go on as they are');
      },
    })),
  ];
  for (const row of rows) it(row.name, row.run);
});
