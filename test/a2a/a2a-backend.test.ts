/**
 * An `a2a` ProxyBackend through the whole pipeline — YAML → translate → runtime → forward — with
 * the official @a2a-js/sdk as the upstream agent and as the client: both agent card versions
 * fetched through the gateway name the gateway, message send and streaming go through it, and
 * the policies of any backend apply (the rows per member are in test/e2e/matrix/a2a.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startAgent, textOf, userMessage, type TestAgent } from './agent.ts';

describe('A2A backend through the gateway', () => {
  let agent: TestAgent;
  let gw: GatewayHarness;

  before(async () => {
    agent = await startAgent();
    gw = await startGateway(`
${httpGateway()}---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: agent }
spec:
  a2a: { host: 127.0.0.1, port: ${agent.port} }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: agent }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: agent }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: agent-under-prefix }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /agents/echo } }]
      filters: [{ type: URLRewrite, urlRewrite: { path: { type: ReplacePrefixMatch, replacePrefixMatch: / } } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: agent }]
`);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await agent?.close();
  });

  it('reports the ProxyBackend Accepted', () => {
    const conditions = gw.statusOf('ProxyBackend', 'agent').conditions as { type: string; status: string }[];
    assert.equal(conditions.find((c) => c.type === 'Accepted')?.status, 'True');
  });

  it('v1.0 card (/.well-known/agent-card.json): every supportedInterfaces url names the gateway; web pages stay', async () => {
    const res = await gw.request(80, { path: '/.well-known/agent-card.json', host: 'agents.example.com', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.status, 200);
    const card = JSON.parse(res.text) as { supportedInterfaces: { url: string }[]; provider: { url: string }; documentationUrl: string };
    assert.deepEqual(card.supportedInterfaces.map((i) => i.url), ['http://agents.example.com/a2a/jsonrpc', 'http://agents.example.com/a2a/rest']);
    assert.equal(card.provider.url, 'https://example.org/about');
    assert.equal(card.documentationUrl, 'https://example.org/docs');
    // Asked uncompressed, so the gateway can read it.
    assert.equal(agent.seen.at(-1)?.headers['accept-encoding'], undefined);
  });

  it('v0.3 card (/.well-known/agent.json): url and additionalInterfaces[].url name the gateway', async () => {
    const res = await gw.request(80, { path: '/.well-known/agent.json', host: 'agents.example.com:8080' });
    assert.equal(res.status, 200);
    const card = JSON.parse(res.text) as { url: string; additionalInterfaces: { url: string }[]; provider: { url: string } };
    assert.equal(card.url, 'http://agents.example.com:8080/a2a/jsonrpc');
    assert.deepEqual(card.additionalInterfaces.map((i) => i.url), ['http://agents.example.com:8080/a2a/jsonrpc', 'http://agents.example.com:8080/a2a/rest']);
    assert.equal(card.provider.url, 'https://example.org/about');
  });

  it('the SDK client reads the card through the gateway and sends its message through it', async () => {
    const client = await new ClientFactory().createFromUrl(gw.url(80));
    const before = agent.seen.length;
    const answer = await client.sendMessage(userMessage('hello'));
    assert.equal(textOf(answer), 'echo: hello');
    const rpc = agent.seen.slice(before).filter((s) => s.path === '/a2a/jsonrpc');
    assert.equal(rpc.length, 1);
    // Forwarded by the gateway: the Host it sent is the gateway's, as the card said.
    assert.equal(rpc[0].headers.host, `127.0.0.1:${gw.portOf(80)}`);
  });

  it('streams: sendMessageStream through the gateway yields the agent answer', async () => {
    const client = await new ClientFactory().createFromUrl(gw.url(80));
    const before = agent.seen.length;
    const events: unknown[] = [];
    for await (const event of client.sendMessageStream(userMessage('streamed'))) events.push(event);
    assert.ok(events.length >= 1);
    const texts = events.map((e) => {
      const payload = (e as { payload?: { $case: string; value: unknown } }).payload;
      return payload?.$case === 'message' ? textOf(payload.value) : '';
    });
    assert.ok(texts.includes('echo: streamed'), JSON.stringify(events).slice(0, 400));
    const rpc = agent.seen.slice(before).filter((s) => s.path === '/a2a/jsonrpc');
    assert.deepEqual(rpc.map((s) => s.headers.host), [`127.0.0.1:${gw.portOf(80)}`]);
    assert.match(String(rpc[0].headers.accept), /text\/event-stream/);
  });

  it('the HTTP+JSON/REST binding: a client preferring it sends through the gateway too', async () => {
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }));
    const client = await factory.createFromUrl(gw.url(80));
    const before = agent.seen.length;
    assert.equal(textOf(await client.sendMessage(userMessage('rest'))), 'echo: rest');
    const rest = agent.seen.slice(before).filter((s) => s.path.startsWith('/a2a/rest'));
    assert.deepEqual(rest.map((s) => s.headers.host), [`127.0.0.1:${gw.portOf(80)}`]);
  });

  it('a v0.3 client reads the older card (agent.json) through the gateway and sends through it', async () => {
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
    }));
    const client = await factory.createFromUrl(gw.url(80), '/.well-known/agent.json');
    const before = agent.seen.length;
    assert.equal(textOf(await client.sendMessage(userMessage('old'))), 'echo: old');
    const rpc = agent.seen.slice(before).filter((s) => s.path === '/a2a/jsonrpc');
    assert.deepEqual(rpc.map((s) => s.headers.host), [`127.0.0.1:${gw.portOf(80)}`]);
    // The v0.3 protocol, chosen from the v0.3 card the gateway rewrote.
    assert.equal(rpc[0].headers['a2a-version'], '0.3');
  });

  it('under a route that rewrites a prefix away: the card gives the prefix back, and the SDK client reaches the agent through that route', async () => {
    const res = await gw.request(80, { path: '/agents/echo/.well-known/agent-card.json', host: 'gw.example.com' });
    const card = JSON.parse(res.text) as { supportedInterfaces: { url: string }[] };
    assert.deepEqual(card.supportedInterfaces.map((i) => i.url), ['http://gw.example.com/agents/echo/a2a/jsonrpc', 'http://gw.example.com/agents/echo/a2a/rest']);
    const client = await new ClientFactory().createFromUrl(gw.url(80, '/agents/echo/'));
    assert.equal(textOf(await client.sendMessage(userMessage('prefixed'))), 'echo: prefixed');
  });
});
