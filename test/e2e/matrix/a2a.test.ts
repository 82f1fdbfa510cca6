/**
 * Member × kind matrix, the `a2a` kind: traffic and backend members on an A2A ProxyBackend, with
 * the official @a2a-js/sdk as client and upstream agent (test/a2a/agent.ts). Each variant gets an
 * HTTPRoute `/<variant>/a2a` rewritten to the agent's `/a2a` and a ProxyPolicy of the same name.
 * Refusals reach the SDK client as JSON-RPC errors (A2A's format), and nothing reaches the agent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientFactory } from '@a2a-js/sdk/client';
import type { AgentCard } from '@a2a-js/sdk';
import { stringify } from 'yaml';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';
import { startAgent, textOf, userMessage, type TestAgent } from '../../a2a/agent.ts';
import { failure, header, nothingReaches, secret } from './support.ts';

const doc = (o: unknown): string => `---\n${stringify(o)}`;

interface A2aVariant {
  readonly name: string;
  readonly traffic?: Record<string, unknown>;
  readonly backend?: Record<string, unknown>;
  readonly filters?: readonly Record<string, unknown>[];
}

const VARIANTS: readonly A2aVariant[] = [
  { name: 'apikey', traffic: { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } } },
  { name: 'authorization', traffic: { authorization: { action: 'Allow', policy: { matchExpressions: ['request.headers["x-user"] == "alice"'] } } } },
  // The A2A method from the JSON-RPC body: only SendMessage, never SendStreamingMessage.
  { name: 'authz-method', traffic: { authorization: { action: 'Allow', policy: { matchExpressions: ['json(request.body).method == "SendMessage"'] } } } },
  // The same through the `a2a` CEL variable; alice's skill "echo" only.
  { name: 'authz-a2a', traffic: { authorization: { action: 'Allow', policy: { matchExpressions: ['a2a.method == "SendMessage" && a2a.skill == "echo"'] } } } },
  { name: 'rl-local', traffic: { rateLimit: { local: [{ requests: 1, unit: 'Hours' }] } } },
  { name: 'timeouts', traffic: { timeouts: { request: '500ms' } } },
  { name: 'http', backend: { http: { requestTimeout: '500ms' } } },
  { name: 'headers', filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-route', value: 'on' }] } }] },
  { name: 'auth-key', backend: { auth: { key: 'sk-agent' } } },
  { name: 'transformation', backend: { transformation: { request: { set: [{ name: 'x-btx', value: '"on"' }] } } } },
];

function manifests(agentPort: number): string {
  let out = httpGateway() + secret('client-keys', { team: 'sk-good' }) + doc({
    apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyBackend', metadata: { name: 'agent', namespace: 'default' },
    spec: { a2a: { host: '127.0.0.1', port: agentPort } },
  });
  for (const v of VARIANTS) {
    const name = `${v.name}-a2a`;
    const rewrite = { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/a2a' } } };
    out += doc({
      apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace: 'default' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/${v.name}/a2a` } }], filters: [rewrite, ...(v.filters ?? [])], backendRefs: [{ group: 'switchboard.dev', kind: 'ProxyBackend', name: 'agent' }] }],
      },
    });
    if (v.traffic || v.backend) {
      out += doc({
        apiVersion: 'switchboard.dev/v1alpha1', kind: 'ProxyPolicy', metadata: { name, namespace: 'default' },
        spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name }], ...(v.traffic ? { traffic: v.traffic } : {}), ...(v.backend ? { backend: v.backend } : {}) },
      });
    }
  }
  return out;
}

/** A refusal as the SDK client surfaces it: the JSON-RPC error's message, which is the gateway's. */
function assertA2aRefusal(err: unknown, message: RegExp): void {
  assert.ok(err instanceof Error, String(err));
  assert.match(err.message, message);
}

describe('member × kind matrix: the a2a kind', () => {
  let agent: TestAgent;
  let gw: GatewayHarness;
  let card: AgentCard;

  before(async () => {
    agent = await startAgent();
    gw = await startGateway(manifests(agent.port));
    assert.deepEqual(gw.applyErrors, []);
    // The card, read straight from the agent: each variant's client points its interface at the variant's route.
    card = (await (await fetch(`http://127.0.0.1:${agent.port}/.well-known/agent-card.json`)).json()) as AgentCard;
  });
  after(async () => {
    await gw?.close();
    await agent?.close();
  });

  function client(variant: string): ReturnType<ClientFactory['createFromAgentCard']> {
    const url = gw.url(80, `/${variant}/a2a/jsonrpc`);
    return new ClientFactory().createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.map((i) => ({ ...i, url })) });
  }

  async function send(variant: string, headers: Record<string, string> = {}, text = 'hi'): Promise<string> {
    return textOf(await (await client(variant)).sendMessage(userMessage(text), { serviceParameters: headers }));
  }

  /** The raw JSON-RPC answer of a refused call, to check A2A's error format. */
  async function rawRefusal(variant: string, headers: Record<string, string> = {}): Promise<{ status: number; body: { jsonrpc?: string; id?: unknown; error?: { code?: number; data?: { code?: string } } } }> {
    const res = await gw.request(80, {
      path: `/${variant}/a2a/jsonrpc`, method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: {} }),
    });
    return { status: res.status, body: JSON.parse(res.text) as never };
  }

  it('apiKeyAuthentication on a2a: a missing key is a 401 JSON-RPC error, nothing reaches the agent; the key is let through', async () => {
    assertA2aRefusal(await nothingReaches(agent, () => failure(send('apikey'))), /API key is required/);
    const raw = await rawRefusal('apikey');
    assert.equal(raw.status, 401);
    assert.equal(raw.body.jsonrpc, '2.0');
    assert.equal(raw.body.error?.data?.code, 'unauthorized');
    assert.equal(await send('apikey', { authorization: 'Bearer sk-good' }), 'echo: hi');
  });

  it('authorization on a2a: CEL denies bob (403 JSON-RPC error), allows alice', async () => {
    assertA2aRefusal(await nothingReaches(agent, () => failure(send('authorization', { 'x-user': 'bob' }))), /not authorized/);
    const raw = await rawRefusal('authorization', { 'x-user': 'bob' });
    assert.equal(raw.status, 403);
    assert.equal(raw.body.error?.data?.code, 'forbidden');
    assert.equal(await send('authorization', { 'x-user': 'alice' }), 'echo: hi');
  });

  it('authorization on a2a by A2A method (json(request.body).method): SendMessage allowed, SendStreamingMessage refused', async () => {
    assert.equal(await send('authz-method'), 'echo: hi');
    const stream = async (): Promise<unknown[]> => {
      const events: unknown[] = [];
      for await (const e of (await client('authz-method')).sendMessageStream(userMessage('hi'))) events.push(e);
      return events;
    };
    assertA2aRefusal(await nothingReaches(agent, () => failure(stream())), /not authorized|403/);
  });

  it('authorization on a2a with the a2a CEL variable (a2a.method, a2a.skill from the message metadata)', async () => {
    const withSkill = (skill: string): ReturnType<typeof userMessage> => {
      const request = userMessage('hi');
      return { ...request, message: { ...request.message!, metadata: { skill } } };
    };
    assert.equal(textOf(await (await client('authz-a2a')).sendMessage(withSkill('echo'))), 'echo: hi');
    assertA2aRefusal(await nothingReaches(agent, () => failure(client('authz-a2a').then((c) => c.sendMessage(withSkill('other'))))), /not authorized/);
    assertA2aRefusal(await nothingReaches(agent, () => failure(send('authz-a2a'))), /not authorized/);
  });

  it('rateLimit.local on a2a: the second call in the window is a 429 JSON-RPC error', async () => {
    assert.equal(await send('rl-local'), 'echo: hi');
    assertA2aRefusal(await nothingReaches(agent, () => failure(send('rl-local'))), /rate limit exceeded/);
  });

  it('timeouts.request on a2a: a slow agent is cut at 504', async () => {
    const started = Date.now();
    assertA2aRefusal(await failure(send('timeouts', {}, 'slow')), /timed out|timeout/i);
    assert.ok(Date.now() - started < 1800, 'cut before the agent answered');
  });

  it('backend http.requestTimeout on a2a: a slow agent is cut at 504', async () => {
    const started = Date.now();
    assertA2aRefusal(await failure(send('http', {}, 'slow')), /timed out|timeout/i);
    assert.ok(Date.now() - started < 1800, 'cut before the agent answered');
  });

  it('route RequestHeaderModifier on a2a: the agent sees the set header', async () => {
    assert.equal(await send('headers'), 'echo: hi');
    assert.equal(header(agent.seen.at(-1)!.headers, 'x-route'), 'on');
  });

  it('backend auth.key on a2a: the agent gets the backend credential', async () => {
    assert.equal(await send('auth-key', { authorization: 'Bearer client' }), 'echo: hi');
    assert.equal(header(agent.seen.at(-1)!.headers, 'authorization'), 'Bearer sk-agent');
  });

  it('backend transformation on a2a: the request header it sets reaches the agent', async () => {
    assert.equal(await send('transformation'), 'echo: hi');
    assert.equal(header(agent.seen.at(-1)!.headers, 'x-btx'), 'on');
  });
});
