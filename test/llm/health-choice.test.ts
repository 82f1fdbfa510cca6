/**
 * Health-weighted provider choice (docs/llm.md, "Provider health"), through a listening gateway
 * with the official openai SDK (its own retries off), two providers in one priority group:
 * a 429 with Retry-After evicts for that long; a stream cut after its head is not failed over and
 * makes the provider lose the next draws; a provider stalling before its head costs one timeout,
 * then is evicted by its `health` policy; an eviction ends after its duration with the score
 * `restoreHealth` sets. The state is visible in the admin API (`/providers`) and as metrics.
 *
 * The first three fail with the providers taken in plain rotation (SWITCHBOARD_LLM_PROVIDER_CHOICE=rotation).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { createAdminServer } from '../../src/embedded/admin-server.ts';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { httpGateway } from '../support/manifests.ts';

type Behaviour = (req: IncomingMessage, res: ServerResponse, stream: boolean) => void;

/** A provider double speaking OpenAI's chat completions; `behave` decides each answer. */
interface Double {
  readonly port: number;
  requests: number;
  behave: Behaviour;
  stop(): Promise<void>;
}

const completion = JSON.stringify({
  id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const chunk = (content: string, finish: string | null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

const ok: Behaviour = (_req, res, stream) => {
  if (stream) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(chunk('hello', null) + chunk('', 'stop') + 'data: [DONE]\n\n');
  else res.writeHead(200, { 'content-type': 'application/json' }).end(completion);
};
const limited: Behaviour = (_req, res) => void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' }).end('{"error":{"message":"slow down","type":"rate_limit"}}');
const unavailable: Behaviour = (_req, res) => void res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"down","type":"server_error"}}');
/** Starts the stream (head and one chunk), then cuts the connection. */
const cutting: Behaviour = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk('partial', null));
  setTimeout(() => res.socket?.destroy(), 20);
};
/** Never answers (the gateway's requestTimeout ends it). */
const stalling: Behaviour = () => undefined;

async function startDouble(behave: Behaviour): Promise<Double> {
  const server: Server = createServer((req, res) => {
    double.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => double.behave(req, res, /"stream"\s*:\s*true/.test(Buffer.concat(chunks).toString('utf8'))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const double: Double = {
    port: (server.address() as AddressInfo).port, requests: 0, behave,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return double;
}

/** One route `/<name>` to a ProxyBackend `<name>` with providers `a` and `b` in one group and `policies` inline. */
function pair(name: string, a: Double, b: Double, policies: Record<string, unknown> = {}): string {
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
    groups:
      - providers:
          - { name: a, providerA: {}, host: 127.0.0.1, port: ${a.port} }
          - { name: b, providerA: {}, host: 127.0.0.1, port: ${b.port} }
  policies: ${JSON.stringify({ auth: { key: 'sk-operator' }, ai: { routes: { '/chat/completions': 'Completions' } }, ...policies })}
`;
}

interface ProviderView { provider: string; score: number; timesEvicted: number; evictedUntil: number | null; consecutiveFailures: number }

describe('health-weighted provider choice in a priority group', () => {
  const doubles: Record<string, Double> = {};
  let runtime: ProxyRuntime;
  let registry: Registry;
  let admin: Server;
  let gatewayPort: number;

  before(async () => {
    const names = ['limitedA', 'limitedB', 'cutA', 'cutB', 'stallA', 'stallB', 'returnA', 'returnB'];
    const behaviours: Behaviour[] = [limited, ok, cutting, ok, stalling, ok, unavailable, ok];
    await Promise.all(names.map(async (n, i) => { doubles[n] = await startDouble(behaviours[i]); }));
    const yaml = httpGateway()
      + pair('limited', doubles.limitedA, doubles.limitedB)
      + pair('cut', doubles.cutA, doubles.cutB)
      + pair('stall', doubles.stallA, doubles.stallB, { http: { requestTimeout: '300ms' }, health: { eviction: { consecutiveFailures: 1, duration: '60s' } } })
      + pair('return', doubles.returnA, doubles.returnB, { health: { unhealthyCondition: 'response.code == 503', eviction: { duration: '300ms', restoreHealth: 100 } } });
    const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject).filter(Boolean);
    const { config } = translate(objects);
    registry = new Registry();
    runtime = new ProxyRuntime({ logger: silentLogger, registry, bindAddress: '127.0.0.1', listenPort: () => 0 });
    const applied = await runtime.apply(config);
    assert.deepEqual(applied.errors, []);
    gatewayPort = runtime.portOf(80) as number;
    admin = createAdminServer({ config: () => config, statuses: () => [], isReady: () => true, secretPaths: () => [], providerHealth: () => runtime.providerHealth() });
    await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => admin?.close(resolve));
    await runtime?.close({ graceMs: 0 });
    await Promise.all(Object.values(doubles).map((d) => d.stop()));
  });

  const openai = (name: string) => new OpenAI({ apiKey: 'sk-client', baseURL: `http://127.0.0.1:${gatewayPort}/${name}/v1`, maxRetries: 0 });
  const chat = (name: string) => openai(name).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  async function providers(backend: string): Promise<Record<string, ProviderView>> {
    const res = await fetch(`http://127.0.0.1:${(admin.address() as AddressInfo).port}/providers`);
    assert.equal(res.status, 200);
    const body = await res.json() as { backends: { backend: string; providers: ProviderView[] }[] };
    const found = body.backends.find((b) => b.backend.endsWith(`/${backend}`));
    assert.ok(found, `no provider health for ${backend} in ${JSON.stringify(body)}`);
    return Object.fromEntries(found.providers.map((p) => [p.provider, p]));
  }

  it('a 429 with Retry-After evicts the provider for that long: every request succeeds and it gets no second one', async () => {
    for (let i = 0; i < 12; i++) assert.equal((await chat('limited')).choices[0].message.content, 'hello');
    // The first draw may or may not land on it; once it has answered 429 it is out for 30 s.
    assert.ok(doubles.limitedA.requests <= 1, `the rate-limited provider got ${doubles.limitedA.requests} requests`);
    if (doubles.limitedA.requests === 0) return;
    const view = await providers('limited');
    assert.equal(view.a.timesEvicted, 1);
    assert.ok(view.a.evictedUntil !== null && view.a.evictedUntil - Date.now() > 25_000 && view.a.evictedUntil - Date.now() <= 30_000, JSON.stringify(view.a));
    assert.equal(view.b.evictedUntil, null);
    const metrics = await registry.metrics();
    assert.match(metrics, /switchboard_llm_provider_evicted\{backend="[^"]*\/limited",provider="a"\} 1/);
    assert.match(metrics, /switchboard_llm_provider_evicted\{backend="[^"]*\/limited",provider="b"\} 0/);
    assert.match(metrics, /switchboard_llm_provider_times_evicted\{backend="[^"]*\/limited",provider="a"\} 1/);
  });

  it('a stream cut after its first bytes reaches the client as a failure (no failover) and the provider loses the next draws', async () => {
    let cuts = 0;
    for (let i = 0; i < 20 && doubles.cutA.requests === 0; i++) {
      const before = doubles.cutB.requests;
      try {
        const stream = await openai('cut').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] });
        for await (const _ of stream) { /* drain */ }
      } catch {
        cuts++;
        assert.equal(doubles.cutB.requests, before, 'nothing is failed over once the client got bytes');
      }
    }
    assert.equal(doubles.cutA.requests, 1, 'some draw lands on the cutting provider');
    assert.equal(cuts, 1);
    for (let i = 0; i < 10; i++) {
      const stream = await openai('cut').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      for await (const _ of stream) { /* drain */ }
    }
    assert.equal(doubles.cutA.requests, 1, 'after the cut, the healthy provider wins every draw');
    const view = await providers('cut');
    assert.ok(view.a.score < view.b.score, JSON.stringify(view));
  });

  it('a provider stalling before its head costs one timeout, then its health policy evicts it', async () => {
    const slow: number[] = [];
    for (let i = 0; i < 12; i++) {
      const started = Date.now();
      assert.equal((await chat('stall')).choices[0].message.content, 'hello');
      if (Date.now() - started >= 300) slow.push(Date.now() - started);
    }
    assert.ok(doubles.stallA.requests <= 1 && slow.length === doubles.stallA.requests, `stalled requests: ${doubles.stallA.requests}, slow answers: ${slow.join(', ')}`);
    if (doubles.stallA.requests === 1) assert.equal((await providers('stall')).a.timesEvicted, 1);
  });

  it('an eviction ends after its duration, with the score restoreHealth sets; the next one lasts twice as long', async () => {
    for (let i = 0; i < 20 && doubles.returnA.requests === 0; i++) await chat('return');
    assert.equal(doubles.returnA.requests, 1);
    let view = await providers('return');
    assert.equal(view.a.timesEvicted, 1);
    assert.ok(view.a.evictedUntil !== null);
    await new Promise((resolve) => setTimeout(resolve, 350));
    view = await providers('return');
    assert.equal(view.a.evictedUntil, null);
    assert.equal(view.a.score, 100);
    // Back in the order: with the other provider failing too, failover reaches it within the next
    // request whichever goes first, and it is evicted again, now for 2 × 300 ms.
    doubles.returnB.behave = unavailable;
    await assert.rejects(chat('return'), (err: { status?: number }) => err.status === 503);
    assert.equal(doubles.returnA.requests, 2);
    view = await providers('return');
    assert.equal(view.a.timesEvicted, 2);
    assert.ok(view.a.evictedUntil !== null && view.a.evictedUntil - Date.now() > 400, JSON.stringify(view.a));
  });
});
