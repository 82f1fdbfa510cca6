/**
 * A route's `traffic.retry` on `ai` backends, combined with provider failover (docs/llm.md,
 * "Failover and the route's traffic.retry"), through a listening gateway with the official openai
 * and Anthropic SDKs (their own retries off): failover first, then a retry that waits the backoff
 * and re-picks; a stream whose first try failed before its head is retried; a status only the
 * policy lists is retried; the budget bounds the attempts; nothing is retried once a stream has
 * started.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { responseFixture, startMockProvider, streamFixture, type Answer, type MockProvider } from './mock-provider.ts';

const ROUTES = '{ /chat/completions: Completions, /messages: Messages }';
const BACKOFF_MS = 150;
const unavailable: Answer = { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } };
const timedOut: Answer = { status: 408, body: { error: { message: 'request timeout', type: 'timeout' } } };

/** Answers the listed answers in turn, then `rest` for every later request. */
function sequence(answers: readonly Answer[], rest: Answer): () => Answer {
  let n = 0;
  return () => answers[n++] ?? rest;
}

/** A provider that starts a chat stream (200 and one chunk) and then cuts the connection. */
function startCuttingProvider(): Promise<Server & { requests: number }> {
  const server = Object.assign(createServer((req, res) => {
    server.requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: { role: 'assistant', content: 'partial' }, finish_reason: null }] })}\n\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    });
  }), { requests: 0 });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function route(name: string, backend: string, retry: string): string {
  return `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name} }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /${name} } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${backend} }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}-retry }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${name} }]
  traffic: { retry: ${retry} }
`;
}

function aiBackend(name: string, ai: string): string {
  return `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai: ${ai}
  policies: { auth: { key: sk-operator }, ai: { routes: ${ROUTES} } }
`;
}

const at = (p: { host: string; port: number }) => `host: ${p.host}, port: ${p.port}`;

describe('traffic.retry on an ai backend, with failover', () => {
  let first: MockProvider;
  let second: MockProvider;
  let solo: MockProvider;
  let cutting: Server & { requests: number };
  let gw: GatewayHarness;

  before(async () => {
    [first, second, solo] = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider()]);
    cutting = await startCuttingProvider();
    gw = await startGateway(httpGateway()
      + aiBackend('tiers', `{ groups: [ { providers: [{ name: first, providerA: {}, ${at(first)} }] }, { providers: [{ name: second, providerA: {}, ${at(second)} }] } ] }`)
      + aiBackend('solo', `{ provider: { providerA: {}, ${at(solo)} } }`)
      + aiBackend('cut', `{ provider: { providerA: {}, host: 127.0.0.1, port: ${(cutting.address() as AddressInfo).port} } }`)
      + route('tiers', 'tiers', `{ codes: [503], attempts: 1, backoff: ${BACKOFF_MS}ms }`)
      + route('solo', 'solo', '{ codes: [503, 408], attempts: 2, backoff: 10ms }')
      + route('cut', 'cut', '{ codes: [503], attempts: 2 }'));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([first, second, solo].map((m) => m?.stop()));
    await new Promise((resolve) => cutting?.close(resolve));
  });
  beforeEach(() => {
    for (const m of [first, second, solo]) m.requests.length = 0;
  });

  const openai = (prefix: string) => new OpenAI({ apiKey: 'sk-client', baseURL: gw.url(80, `/${prefix}/v1`), maxRetries: 0 });
  const anthropic = (prefix: string) => new Anthropic({ apiKey: 'sk-client', baseURL: gw.url(80, `/${prefix}`), maxRetries: 0 });
  const chat = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'hi' }] };

  it('reports the retry policies Accepted on ai routes', () => {
    for (const name of ['tiers', 'solo', 'cut']) {
      const ancestors = gw.statusOf('ProxyPolicy', `${name}-retry`).ancestors as { conditions: { type: string; status: string; message: string }[] }[];
      const accepted = ancestors[0].conditions.find((c) => c.type === 'Accepted');
      assert.equal(accepted?.status, 'True', accepted?.message);
    }
  });

  it('failover first (free), then one retry after the backoff that re-picks from the top group', async () => {
    first.answer('/v1/chat/completions', sequence([unavailable], responseFixture('openai-length')));
    second.answer('/v1/chat/completions', unavailable);
    const started = Date.now();
    const r = await openai('tiers').chat.completions.create(chat);
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(first.requests.length, 2, 'first: its try, then the retry');
    assert.equal(second.requests.length, 1, 'second: its failover try');
    assert.ok(Date.now() - started >= BACKOFF_MS - 5, `the retry waited the backoff (${Date.now() - started} ms)`);
  });

  it('the budget ends it: every try fails, the last 503 reaches an Anthropic client in its envelope', async () => {
    first.answer('/v1/chat/completions', unavailable);
    second.answer('/v1/chat/completions', unavailable);
    const err = await anthropic('tiers').messages.create({ model: 'claude-x', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, 503);
    assert.equal((err.error as { type?: string }).type, 'error');
    assert.equal(first.requests.length + second.requests.length, 3, 'one try per provider plus attempts: 1');
  });

  it('a stream whose first try failed before its head is retried and arrives whole', async () => {
    solo.answer('/v1/chat/completions', sequence([unavailable], streamFixture('openai-tool-calls')));
    const stream = await openai('solo').chat.completions.create({ ...chat, stream: true });
    let args = '';
    for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) args += call.function?.arguments ?? '';
    assert.ok(args.includes('city'), args);
    assert.equal(solo.requests.length, 2);
  });

  it('a status only the policy lists (408) is held back and retried', async () => {
    solo.answer('/v1/chat/completions', sequence([timedOut], responseFixture('openai-length')));
    const r = await openai('solo').chat.completions.create(chat);
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(solo.requests.length, 2);
  });

  it('a 4xx the policy does not list is final', async () => {
    solo.answer('/v1/chat/completions', sequence([{ status: 404, body: { error: { message: 'no such model', type: 'invalid_request_error' } } }], responseFixture('openai-length')));
    const err = await openai('solo').chat.completions.create(chat).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 404);
    assert.equal(solo.requests.length, 1);
  });

  it('nothing is retried once the stream has started: the cut becomes an error in the stream', async () => {
    const before = cutting.requests;
    const stream = await openai('cut').chat.completions.create({ ...chat, stream: true });
    let text = '';
    const failed = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().then(() => undefined, (e: unknown) => e);
    assert.equal(text, 'partial');
    assert.ok(failed, 'the client sees the stream fail');
    assert.equal(cutting.requests - before, 1, 'one request: no retry after the first byte');
  });
});
