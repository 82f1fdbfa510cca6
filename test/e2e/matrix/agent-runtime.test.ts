/**
 * Member × kind matrix, the `agentRuntime` kind: a ProxyBackend `spec.cloudA.agentRuntime` served
 * through a listening gateway against a local AgentCore data plane (test/agent-runtime/
 * fake-agentcore.ts) that recomputes every SigV4 signature, decodes the runtime from the path and
 * reads the qualifier from the query. Plain fetch clients: no official SDK targets a gateway here
 * (the AWS SDK signs for AWS itself). Each variant has a route `/<variant>` and, when it sets
 * members, a ProxyPolicy of the same name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';
import { SESSION_HEADER, startFakeAgentCore, type FakeAgentCore } from '../../agent-runtime/fake-agentcore.ts';
import { secret } from './support.ts';
import { startFakeSts, type FakeSts } from '../../llm/fake-sts.ts';

const doc = (o: unknown): string => `---\n${stringify(o)}`;

const ARN = 'arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/hosted_agent-Ab12Cd';
const JWT_ARN = 'arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/jwt_agent-Ef34Gh';
const MISSING_ARN = 'arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/gone-Zz99';
/** The environment's keys (default credential chain) and a Secret's, both known to the fake. */
const ENV_KEYS = { id: 'AKIDENVIRONMENT01', secret: 'env/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const SECRET_KEYS = { id: 'AKIDSECRETREF0001', secret: 'secret/K7MDENG+bPxRfiCYEXAMPLE' };
const ROLE = 'arn:aws:iam::123456789012:role/agent-invoker';

interface Variant {
  readonly name: string;
  readonly backend: string;
  readonly traffic?: Record<string, unknown>;
  readonly policy?: Record<string, unknown>;
}

const VARIANTS: readonly Variant[] = [
  { name: 'plain', backend: 'runtime' },
  { name: 'default', backend: 'runtime-default' },
  { name: 'secret', backend: 'runtime', policy: { auth: { cloudA: { secretRef: { name: 'aws-keys' } } } } },
  { name: 'apikey', backend: 'runtime', traffic: { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } } },
  { name: 'rl-local', backend: 'runtime', traffic: { rateLimit: { local: [{ requests: 1, unit: 'Hours' }] } } },
  { name: 'http', backend: 'runtime', policy: { http: { requestTimeout: '300ms' } } },
  { name: 'transformation', backend: 'runtime', policy: { transformation: { request: { set: [{ name: 'x-amzn-bedrock-agentcore-runtime-custom-tier', value: '"gold"' }] } } } },
  { name: 'assume-role', backend: 'runtime', policy: { auth: { cloudA: { assumeRole: { roleIdentifier: ROLE, sessionName: 'gateway-agents' } } } } },
  { name: 'bearer', backend: 'jwt-runtime', policy: { auth: { key: 'inbound-jwt' } } },
  { name: 'cloudb', backend: 'runtime', policy: { auth: { cloudB: { workloadIdentity: {} } } } },
  { name: 'bare', backend: 'bare' },
  { name: 'inline', backend: 'runtime-inline' },
  { name: 'missing', backend: 'missing' },
];

function runtimeBackend(name: string, agentRuntime: Record<string, unknown>, policies?: Record<string, unknown>): string {
  return doc({ apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name, namespace: 'default' }, spec: { cloudA: { agentRuntime }, ...(policies ? { policies } : {}) } });
}

function manifests(): string {
  let out = httpGateway() + secret('client-keys', { team: 'sk-good' }) + secret('aws-keys', { accessKey: SECRET_KEYS.id, secretKey: SECRET_KEYS.secret })
    + runtimeBackend('runtime', { agentRuntimeId: ARN, qualifier: 'prod' })
    + runtimeBackend('runtime-default', { agentRuntimeId: ARN })
    + runtimeBackend('jwt-runtime', { agentRuntimeId: JWT_ARN })
    + runtimeBackend('bare', { agentRuntimeId: 'hosted_agent-Ab12Cd' })
    + runtimeBackend('missing', { agentRuntimeId: MISSING_ARN })
    // docs/agent-runtime.md's example: the credential in the ProxyBackend's own policies.
    + runtimeBackend('runtime-inline', { agentRuntimeId: ARN, qualifier: 'prod' }, { auth: { cloudA: { secretRef: { name: 'aws-keys' } } }, http: { requestTimeout: '120s' } });
  for (const v of VARIANTS) {
    out += doc({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: v.name, namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${v.name}` } }], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: v.backend }] }] },
    });
    if (v.traffic || v.policy) {
      out += doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name: v.name, namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: v.name }], ...(v.traffic ? { traffic: v.traffic } : {}), ...(v.policy ? { backend: v.policy } : {}) },
      });
    }
  }
  return out;
}

describe('member × kind matrix: the agentRuntime kind', () => {
  let fake: FakeAgentCore;
  let sts: FakeSts;
  let gw: GatewayHarness;
  const saved = { ...process.env };

  before(async () => {
    // STS hands out role sessions to the environment's keys; the runtime accepts what it issued.
    sts = await startFakeSts({ [ENV_KEYS.id]: ENV_KEYS.secret }, 'us-west-2');
    const issued = (id: string) => {
      const session = sts.issued.get(id);
      return session ? { secret: session.secretAccessKey, token: session.sessionToken } : undefined;
    };
    fake = await startFakeAgentCore([{ id: ARN, region: 'us-west-2', endpoints: ['prod'] }, { id: JWT_ARN, region: 'us-west-2', bearer: 'inbound-jwt' }], { [ENV_KEYS.id]: ENV_KEYS.secret, [SECRET_KEYS.id]: SECRET_KEYS.secret }, issued);
    process.env.AWS_ENDPOINT_URL_STS = sts.url;
    // The gateway reads the endpoint override when it makes the handler, the keys per request (default credential chain).
    process.env.AWS_ENDPOINT_URL_BEDROCK_AGENTCORE = fake.url;
    process.env.AWS_ACCESS_KEY_ID = ENV_KEYS.id;
    process.env.AWS_SECRET_ACCESS_KEY = ENV_KEYS.secret;
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_REGION;
    gw = await startGateway(manifests());
    assert.deepEqual(gw.applyErrors.filter((e) => !String(e).includes('cloudB')), []);
  });
  after(async () => {
    process.env = saved;
    await gw?.close();
    await fake?.stop();
    await sts?.stop();
  });

  const invoke = (variant: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) => fetch(gw.url(80, `/${variant}/chat`), {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), ...(signal ? { signal } : {}),
  });
  /** Runs `act` and returns how many invocations reached the fake meanwhile. */
  const reached = async (act: () => Promise<unknown>): Promise<number> => {
    const before = fake.invocations.length;
    await act();
    return fake.invocations.length - before;
  };

  it('the ProxyBackend is served: Accepted=True', () => {
    const conditions = gw.statusOf('ProxyBackend', 'runtime').conditions as { type: string; status: string }[];
    assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True');
  });

  it('an invocation is POST /runtimes/<encoded ARN>/invocations?qualifier=, SigV4-signed with the environment keys over the payload, JSON answer passed back', async () => {
    const res = await invoke('plain', { prompt: 'hi' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { result: { role: 'assistant', content: [{ text: 'echo: hi' }] } });
    const call = fake.invocations.at(-1)!;
    assert.equal(call.path, `/runtimes/${encodeURIComponent(ARN)}/invocations?qualifier=prod`);
    assert.equal(call.runtime, ARN);
    assert.equal(call.qualifier, 'prod');
    assert.deepEqual(call.verdict, { ok: true, accessKeyId: ENV_KEYS.id });
    assert.match(call.headers.authorization ?? '', /Credential=AKIDENVIRONMENT01\/\d{8}\/us-west-2\/bedrock-agentcore\/aws4_request/);
    assert.equal(call.body.toString(), '{"prompt":"hi"}');
  });

  it('the runtime session: generated when the client has none (≥ 33 characters) and returned; the client\'s own is passed and echoed', async () => {
    const first = await invoke('plain', { prompt: 'a' });
    const generated = first.headers.get(SESSION_HEADER) ?? '';
    assert.ok(generated.length >= 33, generated);
    assert.equal(fake.invocations.at(-1)!.headers[SESSION_HEADER], generated);
    const own = 'client-session-0123456789-0123456789-abc';
    const second = await invoke('plain', { prompt: 'b' }, { [SESSION_HEADER]: own });
    assert.equal(second.headers.get(SESSION_HEADER), own);
    assert.equal(fake.invocations.at(-1)!.headers[SESSION_HEADER], own);
  });

  it('a streamed answer (text/event-stream) reaches the client event by event, not buffered', async () => {
    const release = fake.hold();
    const res = await invoke('plain', { prompt: 'hi', stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    // The fake holds every event after the first until released: the first must arrive while it waits.
    const first = decoder.decode((await reader.read()).value);
    assert.match(first, /^data: .*"text": "echo"/);
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
    assert.match(rest, /"text": ": hi"/);
    assert.match(rest, /"messageStop"/);
  });

  it('a client that goes away mid-stream: the invocation is cut too (the runtime\'s connection closes)', async () => {
    const release = fake.hold();
    const abort = new AbortController();
    const res = await invoke('plain', { prompt: 'bye', stream: true }, {}, abort.signal);
    const reader = res.body!.getReader();
    await reader.read();
    const before = fake.cutShort;
    abort.abort();
    for (let i = 0; i < 50 && fake.cutShort === before; i++) await new Promise((r) => setTimeout(r, 20));
    release();
    assert.equal(fake.cutShort, before + 1);
  });

  it('no qualifier: none in the query (the runtime\'s DEFAULT endpoint)', async () => {
    assert.equal((await invoke('default', { prompt: 'x' })).status, 200);
    assert.equal(fake.invocations.at(-1)!.path, `/runtimes/${encodeURIComponent(ARN)}/invocations`);
  });

  it('auth.cloudA.secretRef: signed with the Secret\'s keys instead of the environment\'s', async () => {
    assert.equal((await invoke('secret', { prompt: 'x' })).status, 200);
    assert.deepEqual(fake.invocations.at(-1)!.verdict, { ok: true, accessKeyId: SECRET_KEYS.id });
  });

  it('auth.cloudA.assumeRole: the environment keys assume the role at STS (in the runtime\'s region); the invocation is signed with the role session', async () => {
    const before = sts.calls.length;
    assert.equal((await invoke('assume-role', { prompt: 'x' })).status, 200);
    const call = sts.calls.at(-1)!;
    assert.equal(sts.calls.length, before + 1);
    assert.equal(call.form.get('RoleArn'), ROLE);
    assert.equal(call.form.get('RoleSessionName'), 'gateway-agents');
    assert.deepEqual(call.verdict, { ok: true, accessKeyId: ENV_KEYS.id });
    const verdict = fake.invocations.at(-1)!.verdict;
    assert.ok(verdict.ok && 'accessKeyId' in verdict && verdict.accessKeyId.startsWith('ASIA'), JSON.stringify(verdict));
    assert.equal(fake.invocations.at(-1)!.headers['x-amz-security-token'], sts.issued.get((verdict as { accessKeyId: string }).accessKeyId)?.sessionToken);
  });

  it('ProxyBackend spec.policies: the backend\'s own auth.cloudA.secretRef signs its invocations', async () => {
    assert.equal((await invoke('inline', { prompt: 'x' })).status, 200);
    assert.deepEqual(fake.invocations.at(-1)!.verdict, { ok: true, accessKeyId: SECRET_KEYS.id });
    const conditions = gw.statusOf('ProxyBackend', 'runtime-inline').conditions as { type: string; status: string }[];
    assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True');
  });

  it('apiKeyAuthentication: without the key 401 in the gateway\'s format and nothing invoked; with it the runtime answers and never sees the client key', async () => {
    let refused: Response | undefined;
    assert.equal(await reached(async () => (refused = await invoke('apikey', { prompt: 'x' }))), 0);
    assert.equal(refused!.status, 401);
    assert.equal(((await refused!.json()) as { error: { code: string } }).error.code, 'unauthorized');
    const ok = await invoke('apikey', { prompt: 'x' }, { authorization: 'Bearer sk-good' });
    assert.equal(ok.status, 200);
    assert.doesNotMatch(fake.invocations.at(-1)!.headers.authorization ?? '', /sk-good/);
  });

  it('rateLimit local: the second invocation in the hour is 429 and never reaches the runtime', async () => {
    assert.equal((await invoke('rl-local', { prompt: 'x' })).status, 200);
    let limited: Response | undefined;
    assert.equal(await reached(async () => (limited = await invoke('rl-local', { prompt: 'x' }))), 0);
    assert.equal(limited!.status, 429);
  });

  it('backend http.requestTimeout: a runtime slower than it is 504 upstream_timeout', async () => {
    fake.delayMs = 1000;
    try {
      const res = await invoke('http', { prompt: 'x' });
      assert.equal(res.status, 504);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'upstream_timeout');
    } finally {
      fake.delayMs = 0;
    }
  });

  it('backend transformation: the header it sets reaches the runtime, inside the signature', async () => {
    assert.equal((await invoke('transformation', { prompt: 'x' })).status, 200);
    const call = fake.invocations.at(-1)!;
    assert.equal(call.headers['x-amzn-bedrock-agentcore-runtime-custom-tier'], 'gold');
    assert.match(call.headers.authorization ?? '', /SignedHeaders=[^,]*x-amzn-bedrock-agentcore-runtime-custom-tier/);
  });

  it('backend auth key: a runtime with an inbound JWT authorizer gets Authorization Bearer, not SigV4', async () => {
    assert.equal((await invoke('bearer', { prompt: 'x' })).status, 200);
    const call = fake.invocations.at(-1)!;
    assert.equal(call.headers.authorization, 'Bearer inbound-jwt');
    assert.equal(call.headers['x-amz-date'], undefined);
  });

  it('backend auth cloudB: refused 500 policy_invalid, nothing invoked; the policy says why', async () => {
    let res: Response | undefined;
    assert.equal(await reached(async () => (res = await invoke('cloudb', { prompt: 'x' }))), 0);
    assert.equal(res!.status, 500);
    assert.equal(((await res!.json()) as { error: { code: string } }).error.code, 'policy_invalid');
    const ancestors = gw.statusOf('ProxyPolicy', 'cloudb').ancestors as { conditions: { type: string; reason: string; message: string }[] }[];
    const accepted = ancestors[0].conditions.find((c) => c.type === 'Accepted')!;
    assert.equal(accepted.reason, 'Unsupported');
    assert.match(accepted.message, /spec\.backend\.auth\.cloudB/);
  });

  it('no region (a bare id, no auth.cloudA.region, no AWS_REGION): 500 backend_policy_failed naming the fix, nothing invoked', async () => {
    let res: Response | undefined;
    assert.equal(await reached(async () => (res = await invoke('bare', { prompt: 'x' }))), 0);
    assert.equal(res!.status, 500);
    const body = (await res!.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'backend_policy_failed');
    assert.match(body.error.message, /AWS_REGION/);
  });

  it('the runtime\'s own error (ResourceNotFoundException) passes through as it answered', async () => {
    const res = await invoke('missing', { prompt: 'x' });
    assert.equal(res.status, 404);
    assert.match(res.headers.get('x-amzn-errortype') ?? '', /^ResourceNotFoundException/);
    assert.match(((await res.json()) as { message: string }).message, /not found/);
  });
});
