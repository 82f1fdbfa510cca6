/**
 * cloud-A role assumption for providerG: LlmCredentials against a local fake STS that verifies
 * the SigV4 signature of the AssumeRole call (table rows: session names and tags, static and
 * from CEL, rejections, STS refusals, caching), then end to end through a listening gateway: the
 * Bedrock mock accepts only requests signed with the assumed session's keys and token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { BackendAuthPolicy } from '../../src/ir/policy.ts';
import type { CelInput } from '../../src/cel/index.ts';
import type { RequestIdentity } from '../../src/proxy/policies/context.ts';
import { CredentialError, CredentialRequestError, LlmCredentials, type SignableRequest } from '../../src/proxy/llm/gateway/credentials/index.ts';
import { TokenCache } from '../../src/proxy/policies/credentials/token-cache.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { startFakeSts, verifySigV4, type FakeSts } from './fake-sts.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { startMockProvider, streamFixture, type MockProvider } from './mock-provider.ts';

const BASE = { accessKey: 'AKIDBASEEXAMPLE0001', secretKey: 'base/secret+key/EXAMPLE0000000000000000' };
const ENV_BASE = { AWS_ACCESS_KEY_ID: 'AKIDENVEXAMPLE00002', AWS_SECRET_ACCESS_KEY: 'env/secret+key/EXAMPLE00000000000000000' };
const REGION = 'us-west-2';
const ROLE = 'arn:aws:iam::123456789012:role/bedrock-invoker';

function bedrockRequest(): SignableRequest {
  return {
    host: `bedrock-runtime.${REGION}.amazonaws.com`, method: 'POST', path: '/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse',
    headers: { 'content-type': 'application/json' }, body: Buffer.from('{"messages":[]}'), credential: { kind: 'sigv4', service: 'bedrock', region: REGION },
  };
}

describe('cloudA assumeRole against a fake STS', () => {
  let sts: FakeSts;
  before(async () => {
    sts = await startFakeSts({ [BASE.accessKey]: BASE.secretKey, [ENV_BASE.AWS_ACCESS_KEY_ID]: ENV_BASE.AWS_SECRET_ACCESS_KEY }, REGION);
  });
  after(() => sts?.stop());

  const env = () => ({ AWS_ENDPOINT_URL_STS: sts.url });
  const cloudA = (assumeRole: Record<string, unknown>, secret: Record<string, string> | null = BASE) => ({ cloudA: { ...(secret ? { secret } : {}), assumeRole: { roleIdentifier: ROLE, ...assumeRole } } }) as BackendAuthPolicy;
  const headerCel = (headers: Record<string, string>): (() => CelInput) => () => ({ request: { method: 'POST', url: '/v1/chat/completions', headers } });

  /** Signs a Bedrock request; returns the STS call it made (if any) and the verdict on the upstream signature. */
  async function sign(auth: BackendAuthPolicy, opts: { env?: NodeJS.ProcessEnv; identity?: RequestIdentity; cel?: () => CelInput; creds?: LlmCredentials } = {}) {
    const before = sts.calls.length;
    const creds = opts.creds ?? new LlmCredentials({ env: { ...env(), ...opts.env } });
    const req = bedrockRequest();
    const out = await creds.apply(req, auth, opts.identity ?? {}, opts.cel);
    const upstream = { method: req.method, path: out.path, headers: { ...out.headers }, body: Buffer.from(req.body) };
    return { call: sts.calls.length > before ? sts.calls.at(-1) : undefined, upstream: sts.verifySession(upstream, { service: 'bedrock', region: REGION }), headers: out.headers };
  }

  const accepted: {
    name: string; auth: BackendAuthPolicy; env?: NodeJS.ProcessEnv; identity?: RequestIdentity; cel?: () => CelInput;
    expect: { baseKey: string; sessionName: string; tags: Record<string, string> };
  }[] = [
    {
      name: 'static session name and tag, base keys from the Secret',
      auth: cloudA({ sessionName: 'gw-static', tags: [{ key: 'team', value: 'ml' }] }),
      expect: { baseKey: BASE.accessKey, sessionName: 'gw-static', tags: { team: 'ml' } },
    },
    {
      name: 'no Secret: the ambient AWS_* keys assume the role',
      auth: cloudA({ sessionName: 'gw-ambient' }, null), env: ENV_BASE,
      expect: { baseKey: ENV_BASE.AWS_ACCESS_KEY_ID, sessionName: 'gw-ambient', tags: {} },
    },
    {
      name: 'no session name configured: the default one',
      auth: cloudA({}),
      expect: { baseKey: BASE.accessKey, sessionName: 'switchboard', tags: {} },
    },
    {
      name: 'sessionNameExpression over a request header',
      auth: cloudA({ sessionNameExpression: '"user-" + request.headers["x-user"]' }), cel: headerCel({ 'x-user': 'alice@example.com' }),
      expect: { baseKey: BASE.accessKey, sessionName: 'user-alice@example.com', tags: {} },
    },
    {
      name: 'sessionNameExpression over JWT claims (identity only, no request CEL input)',
      auth: cloudA({ sessionNameExpression: 'jwt.sub' }), identity: { jwt: { claims: { sub: 'svc-42', team: 'search' }, token: 't' } },
      expect: { baseKey: BASE.accessKey, sessionName: 'svc-42', tags: {} },
    },
    {
      name: 'tag expressions beside static tags',
      auth: cloudA({ sessionName: 'gw-tags', tags: [{ key: 'team', expression: 'jwt.team' }, { key: 'env', value: 'prod' }, { key: 'path', expression: 'request.path' }] }),
      identity: { jwt: { claims: { team: 'search' }, token: 't' } }, cel: () => ({ jwt: { team: 'search' }, request: { method: 'POST', url: '/v1/chat/completions' } }),
      expect: { baseKey: BASE.accessKey, sessionName: 'gw-tags', tags: { team: 'search', env: 'prod', path: '/v1/chat/completions' } },
    },
  ];
  for (const c of accepted) {
    it(`assumes the role: ${c.name}`, async () => {
      const { call, upstream, headers } = await sign(c.auth, c);
      assert.ok(call, 'STS was called');
      assert.deepEqual(call.verdict, { ok: true, accessKeyId: c.expect.baseKey }, 'the AssumeRole call is signed with the base keys for sts');
      assert.equal(call.form.get('RoleArn'), ROLE);
      assert.equal(call.form.get('RoleSessionName'), c.expect.sessionName);
      assert.equal(call.form.get('DurationSeconds'), '3600');
      const session = sts.issued.get(headers.authorization.match(/Credential=([^/]+)/)![1])!;
      assert.deepEqual(session.tags, c.expect.tags);
      assert.equal(upstream.ok, true, `the provider request is signed with the session: ${JSON.stringify(upstream)}`);
      assert.equal(headers['x-amz-security-token'], session.sessionToken);
    });
  }

  const rejected: { name: string; auth: BackendAuthPolicy; identity?: RequestIdentity; cel?: () => CelInput; message: RegExp }[] = [
    { name: 'a session name with a space', auth: cloudA({ sessionNameExpression: '"bad name"' }), message: /session name computed from the request/ },
    { name: 'a one-character session name', auth: cloudA({ sessionNameExpression: '"x"' }), message: /session name computed from the request/ },
    { name: 'a session name of 65 characters', auth: cloudA({ sessionNameExpression: `"${'a'.repeat(65)}"` }), message: /session name computed from the request/ },
    { name: 'a missing header', auth: cloudA({ sessionNameExpression: 'request.headers["x-user"]' }), cel: headerCel({}), message: /no session name/ },
    { name: 'a claim that is a list', auth: cloudA({ sessionNameExpression: 'jwt.groups' }), identity: { jwt: { claims: { groups: ['a', 'b'] }, token: 't' } }, message: /no session name/ },
    { name: 'a tag value with a forbidden character', auth: cloudA({ tags: [{ key: 'team', expression: '"a#b"' }] }), message: /session tag "team"/ },
    { name: 'a tag value longer than 256', auth: cloudA({ tags: [{ key: 'team', expression: 'request.headers["x-long"]' }] }), cel: headerCel({ 'x-long': 'v'.repeat(257) }), message: /session tag "team"/ },
  ];
  for (const c of rejected) {
    it(`rejects the request, STS not called: ${c.name}`, async () => {
      const before = sts.calls.length;
      const err = await (async () => new LlmCredentials({ env: env() }).apply(bedrockRequest(), c.auth, c.identity ?? {}, c.cel))().then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof CredentialRequestError, String(err));
      assert.equal(err.status, 403);
      assert.match(err.message, c.message);
      assert.equal(sts.calls.length, before);
    });
  }

  it('an uncompilable expression is a credential (configuration) error, not a client error', async () => {
    await assert.rejects(async () => new LlmCredentials({ env: env() }).apply(bedrockRequest(), cloudA({ sessionNameExpression: '"a" +' }), {}), (e) => e instanceof CredentialError && /invalid CEL/.test(e.message));
  });

  const refused: { name: string; setup: (s: FakeSts) => void; auth?: BackendAuthPolicy; message: RegExp }[] = [
    { name: 'STS denies the role', setup: (s) => void (s.failWith = { status: 403, code: 'AccessDenied', message: 'User is not authorized to perform: sts:AssumeRole' }), message: /403 AccessDenied: User is not authorized/ },
    { name: 'base keys STS does not know', setup: () => undefined, auth: cloudA({ sessionName: 'gw-x' }, { accessKey: 'AKIDUNKNOWN00000000', secretKey: 'nope' }), message: /SignatureDoesNotMatch/ },
    { name: 'an answer without credentials', setup: (s) => void (s.rawAnswer = '<AssumeRoleResponse><AssumeRoleResult></AssumeRoleResult></AssumeRoleResponse>'), message: /no single Credentials/ },
  ];
  for (const c of refused) {
    it(`CredentialError when ${c.name}`, async () => {
      c.setup(sts);
      try {
        await assert.rejects(async () => new LlmCredentials({ env: env() }).apply(bedrockRequest(), c.auth ?? cloudA({ sessionName: 'gw-refused' }), {}), (e) => e instanceof CredentialError && c.message.test(e.message));
      } finally {
        sts.failWith = undefined;
        sts.rawAnswer = undefined;
      }
    });
  }

  it('no base credentials at all: CredentialError before any STS call', async () => {
    const before = sts.calls.length;
    await assert.rejects(async () => new LlmCredentials({ env: env() }).apply(bedrockRequest(), cloudA({}, null), {}), CredentialError);
    assert.equal(sts.calls.length, before);
  });

  it('caches per role, session name and tags; refreshes shortly before expiry', async () => {
    let now = Date.now();
    const creds = new LlmCredentials({ env: env(), tokens: new TokenCache(() => now) });
    const start = sts.calls.length;
    const a1 = await sign(cloudA({ sessionNameExpression: 'jwt.sub' }), { creds, identity: { jwt: { claims: { sub: 'alice' }, token: 't' } } });
    const a2 = await sign(cloudA({ sessionNameExpression: 'jwt.sub' }), { creds, identity: { jwt: { claims: { sub: 'alice' }, token: 't' } } });
    assert.equal(sts.calls.length, start + 1, 'alice twice: one AssumeRole');
    assert.equal(a1.headers['x-amz-security-token'], a2.headers['x-amz-security-token']);
    await sign(cloudA({ sessionNameExpression: 'jwt.sub' }), { creds, identity: { jwt: { claims: { sub: 'bob' }, token: 't' } } });
    await sign(cloudA({ sessionName: 'alice', tags: [{ key: 't', value: '1' }] }), { creds });
    assert.equal(sts.calls.length, start + 3, 'another session name, and other tags, are other sessions');
    now += 3600_000 - 30_000;
    const late = await sign(cloudA({ sessionNameExpression: 'jwt.sub' }), { creds, identity: { jwt: { claims: { sub: 'alice' }, token: 't' } } });
    assert.equal(late.upstream.ok, true, 'the cached session still signs while it is valid');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(sts.calls.length, start + 4, 'a background refresh ran before expiry');
    const fresh = await sign(cloudA({ sessionNameExpression: 'jwt.sub' }), { creds, identity: { jwt: { claims: { sub: 'alice' }, token: 't' } } });
    assert.notEqual(fresh.headers['x-amz-security-token'], a1.headers['x-amz-security-token'], 'the refreshed session is used');
  });

  it('the fake refuses a signature that does not match (the check can fail)', async () => {
    const { upstream, headers } = await sign(cloudA({ sessionName: 'gw-static' }));
    assert.equal(upstream.ok, true);
    const session = sts.issued.get(headers.authorization.match(/Credential=([^/]+)/)![1])!;
    const req = bedrockRequest();
    const tampered = { method: 'POST', path: req.path, headers: { ...headers }, body: Buffer.from('{"messages":[1]}') };
    assert.deepEqual(verifySigV4(tampered, { service: 'bedrock', region: REGION }, () => session.secretAccessKey), { ok: false, reason: 'signature mismatch' });
    const otherToken = { ...tampered, body: Buffer.from(req.body), headers: { ...headers, 'x-amz-security-token': 'other' } };
    assert.equal(sts.verifySession(otherToken, { service: 'bedrock', region: REGION }).ok, false);
  });
});

describe('cloudA assumeRole end to end: Bedrock signed with the assumed session', () => {
  let sts: FakeSts;
  let bedrock: MockProvider;
  let gw: GatewayHarness;
  const saved = process.env.AWS_ENDPOINT_URL_STS;

  before(async () => {
    sts = await startFakeSts({ [BASE.accessKey]: BASE.secretKey }, REGION);
    bedrock = await startMockProvider();
    // The gateway reads the standard override from its environment, as AWS SDKs do.
    process.env.AWS_ENDPOINT_URL_STS = sts.url;
    bedrock.answer('/model/', (req) => {
      const verdict = sts.verifySession(req, { service: 'bedrock', region: REGION });
      return verdict.ok ? streamFixture('bedrock-reasoning-tool') : { status: 403, body: { message: `The security token included in the request is invalid (${verdict.reason})` } };
    });
    const backend = (name: string, assumeRole: string) => `
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { providerG: { region: ${REGION}, model: "anthropic.claude-3-5-sonnet-20241022-v2:0" }, host: ${bedrock.host}, port: ${bedrock.port} }
  policies:
    auth: { cloudA: { secretRef: { name: aws }, assumeRole: ${assumeRole} } }
    ai: { routes: ${ROUTES} }`;
    gw = await startGateway(llmGatewayYaml([{ name: 'assumed', prefix: '/assumed' }, { name: 'badname', prefix: '/badname' }, { name: 'peruser', prefix: '/peruser' }], `
apiVersion: v1
kind: Secret
metadata: { name: aws }
stringData: { accessKey: ${BASE.accessKey}, secretKey: "${BASE.secretKey}" }
---${backend('assumed', `{ roleIdentifier: "${ROLE}", sessionName: gw-e2e, tags: [{ key: team, value: ml }, { key: via, expression: '"gateway"' }] }`)}
---${backend('badname', `{ roleIdentifier: "${ROLE}", sessionNameExpression: '"not a valid name"' }`)}
---${backend('peruser', `{ roleIdentifier: "${ROLE}", sessionNameExpression: '"user-" + request.headers["x-user"]' }`)}
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all([sts?.stop(), bedrock?.stop()]);
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_STS;
    else process.env.AWS_ENDPOINT_URL_STS = saved;
  });

  const client = (prefix: string) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, `${prefix}/v1`), maxRetries: 0 });

  it('two streamed chat requests: one AssumeRole, both converse-stream calls signed with the session', async () => {
    for (let i = 0; i < 2; i++) {
      const stream = await client('/assumed').chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'Weather?' }], stream: true });
      const tools: string[] = [];
      for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) if (call.function?.name) tools.push(call.function.name);
      assert.deepEqual(tools, ['get_weather']);
    }
    assert.equal(sts.calls.length, 1);
    const call = sts.calls[0];
    assert.deepEqual(call.verdict, { ok: true, accessKeyId: BASE.accessKey });
    assert.equal(call.form.get('RoleSessionName'), 'gw-e2e');
    const [session] = [...sts.issued.values()];
    assert.deepEqual(session.tags, { team: 'ml', via: 'gateway' });
    const ups = bedrock.requests.filter((r) => r.path.startsWith('/model/'));
    assert.equal(ups.length, 2);
    for (const up of ups) {
      assert.equal(up.headers['x-amz-security-token'], session.sessionToken);
      assert.match(String(up.headers.authorization), new RegExp(`Credential=${session.accessKeyId}/\\d{8}/${REGION}/bedrock/aws4_request`));
      assert.equal(sts.verifySession(up, { service: 'bedrock', region: REGION }).ok, true);
    }
  });

  it('a session name expression with an invalid result rejects the request in the client format (403), Bedrock not called', async () => {
    const before = bedrock.requests.length;
    const err = await client('/badname').chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 403);
    assert.match(err.message, /session name computed from the request/);
    assert.equal(bedrock.requests.length, before);
  });

  it('a session name expression reads the request (a header): one assumed session per user', async () => {
    const callsBefore = sts.calls.length;
    for (const user of ['alice', 'bob']) {
      const c = new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, '/peruser/v1'), maxRetries: 0, defaultHeaders: { 'x-user': user } });
      const stream = await c.chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'Weather?' }], stream: true });
      for await (const _ of stream) { /* drain */ }
    }
    const names = sts.calls.slice(callsBefore).map((call) => call.form.get('RoleSessionName'));
    assert.deepEqual(names, ['user-alice', 'user-bob']);
  });
});
