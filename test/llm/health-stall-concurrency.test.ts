/**
 * A stalling provider under concurrency (docs/llm.md, "Provider health"): attempts already waiting
 * for its head when one of them times out and gets it evicted are failed over at once — a stall
 * costs one timeout per eviction, not one per attempt in flight (issue 13, bench/failover.ts
 * stall scenario). Through a listening gateway with the official openai SDK (its retries off):
 * `a` alone in the first priority group never answers, `b` in the second answers at once. undici
 * runs the headers timeout on a ~500 ms tick (a timer starts at the tick after it is set), so waits
 * begun close together expire in the same tick whatever the gateway does: the later two requests
 * start 1.1 s after the first — before its 1.5 s timeout can fire, and two ticks later — so their
 * own timeouts would fire at least a tick after it; with the failover they end with the first one.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { httpGateway } from '../support/manifests.ts';

const TIMEOUT_MS = 1500;
const STAGGER_MS = 1100;
/** undici's timer tick is ~500 ms: an own timeout ends at least this much after the first one's. */
const TICK_MS = 450;

const completion = JSON.stringify({
  id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const chunk = (content: string, finish: string | null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

/** A provider double: `stall` never answers (the gateway's requestTimeout or a failover ends it), else OpenAI chat completions. */
async function startDouble(stall: boolean): Promise<{ port: number; requests: number; stop: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    double.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (stall) return;
      if (/"stream"\s*:\s*true/.test(Buffer.concat(chunks).toString('utf8'))) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(chunk('hello', null) + chunk('', 'stop') + 'data: [DONE]\n\n');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(completion);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const double = {
    port: (server.address() as AddressInfo).port, requests: 0,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return double;
}

describe('a stalling provider under concurrency: one timeout per eviction', () => {
  let stalling: Awaited<ReturnType<typeof startDouble>>;
  let healthy: Awaited<ReturnType<typeof startDouble>>;
  let runtime: ProxyRuntime;
  let gatewayPort: number;

  before(async () => {
    [stalling, healthy] = await Promise.all([startDouble(true), startDouble(false)]);
    const policies = { auth: { key: 'sk-operator' }, ai: { routes: { '/chat/completions': 'Completions' } }, http: { requestTimeout: `${TIMEOUT_MS}ms` }, health: { eviction: { consecutiveFailures: 1, duration: '60s' } } };
    const yaml = httpGateway() + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: stall }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /stall } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: stall }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: stall }
spec:
  ai:
    groups:
      - providers: [{ name: a, providerA: {}, host: 127.0.0.1, port: ${stalling.port} }]
      - providers: [{ name: b, providerA: {}, host: 127.0.0.1, port: ${healthy.port} }]
  policies: ${JSON.stringify(policies)}
`;
    const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject).filter(Boolean);
    const { config } = translate(objects);
    runtime = new ProxyRuntime({ logger: silentLogger, registry: new Registry(), bindAddress: '127.0.0.1', listenPort: () => 0 });
    const applied = await runtime.apply(config);
    assert.deepEqual(applied.errors, []);
    gatewayPort = runtime.portOf(80) as number;
  });
  after(async () => {
    await runtime?.close({ graceMs: 0 });
    await Promise.all([stalling?.stop(), healthy?.stop()]);
  });

  it('attempts waiting on the provider when one times out and evicts it fail over at once, buffered and streamed; new ones avoid it', async () => {
    const openai = new OpenAI({ apiKey: 'sk-client', baseURL: `http://127.0.0.1:${gatewayPort}/stall/v1`, maxRetries: 0 });
    /** Resolves with how long the request took and when it ended (epoch ms). */
    const request = async (stream: boolean, delayMs: number): Promise<{ took: number; end: number }> => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const started = Date.now();
      if (stream) {
        let text = '';
        for await (const event of await openai.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] })) text += event.choices[0]?.delta.content ?? '';
        assert.equal(text, 'hello');
      } else assert.equal((await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content, 'hello');
      const end = Date.now();
      return { took: end - started, end };
    };
    const starts = [0, STAGGER_MS, STAGGER_MS + 25];
    const results = await Promise.all(starts.map((at, i) => request(i === 1, at)));
    const took = results.map((r) => r.took);
    assert.equal(stalling.requests, 3, 'all three waited on the stalling provider');
    assert.ok(took[0] >= TIMEOUT_MS, `the first one waits its timeout: ${took.join(', ')} ms`);
    // Without the failover each later one would wait for its own timeout, at least a timer tick after the first one's.
    for (const r of results.slice(1)) assert.ok(Math.abs(r.end - results[0].end) < TICK_MS / 2, `the later ones end with the first one's timeout: took ${took.join(', ')} ms`);
    const a = runtime.providerHealth().find((b) => b.backend.endsWith('/stall'))?.providers.find((p) => p.provider === 'a');
    assert.ok(a, 'provider a has health');
    assert.equal(a.consecutiveFailures, 1, 'one timeout recorded: the failed-over waits are not failures of their own');
    assert.equal(a.timesEvicted, 1);
    assert.equal(a.inflight, 0);
    await request(false, 0);
    assert.equal(stalling.requests, 3, 'the evicted provider gets no new request');
  });
});
