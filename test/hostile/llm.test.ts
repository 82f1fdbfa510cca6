/**
 * Hostile requests and provider answers on an AI backend, through the real CLI: a count_tokens
 * body the tokenizer would chew on for minutes, a provider answering 192 MB to a non-streamed
 * call, 100k-deep JSON, a provider 200 that is not JSON (logged/metered as the 502 the client
 * got), and a provider error echoing the gateway's own key.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { sendRequest } from '../support/client.ts';
import { llmGatewayYaml, ROUTES } from '../llm/gateway-yaml.ts';
import { probeWhile, PROMPT_MS, rssMiB, startHostileGateway, type HostileGateway } from './harness.ts';

const KEY = 'sk-hostile-gateway-key-0123456789';
const HUGE_BYTES = 192 * 1024 * 1024;

/** A provider that misbehaves on request: the model name says how. */
async function startHostileProvider(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; stream?: boolean };
      const key = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (body.model === 'huge') return void sendHuge(res);
      if (body.model === 'not-json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>oops</html>');
      if (body.model === 'echo-key') {
        return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key} (header ${String(req.headers.authorization)})`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'c1', object: 'chat.completion', created: 1, model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/** A JSON chat completion of HUGE_BYTES, written chunk by chunk under backpressure until the reader goes away. */
async function sendHuge(res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"');
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  let closed = false;
  res.on('close', () => { closed = true; });
  for (let sent = 0; sent < HUGE_BYTES && !closed; sent += chunk.length) {
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  if (!closed) res.end('"},"finish_reason":"stop"}]}');
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      ok();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function requestsTotal(metricsPort: number, status: number): Promise<number> {
  const text = (await sendRequest(metricsPort, { path: '/metrics' })).text;
  let total = 0;
  for (const m of text.matchAll(/^switchboard_requests_total\{([^}]*)\} (\d+)$/gm)) if (m[1].includes(`status="${status}"`)) total += Number(m[2]);
  return total;
}

describe('hostile: LLM gateway', () => {
  let provider: Awaited<ReturnType<typeof startHostileProvider>>;
  let gw: HostileGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const probe = async () => {
    const r = await gw.request({ path: '/ai/v1/models' });
    assert.equal(r.status, 200);
  };

  before(async () => {
    provider = await startHostileProvider();
    const yaml = llmGatewayYaml([{ name: 'ai', prefix: '/ai' }], `
apiVersion: v1
kind: Secret
metadata: { name: keys }
stringData: { openai: ${KEY} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ai }
spec:
  ai:
    provider: { providerA: {}, host: 127.0.0.1, port: ${provider.port} }
  policies:
    auth: { secretRef: { name: keys, key: openai } }
    ai: { routes: ${ROUTES} }
`).replace(/port: 80\b/, 'port: {{listener.port}}');
    gw = await startHostileGateway(yaml);
    const baseURL = `http://127.0.0.1:${gw.port}/ai/v1`;
    openai = new OpenAI({ baseURL, apiKey: 'client-key', maxRetries: 0, timeout: 20_000 });
    anthropic = new Anthropic({ baseURL: `http://127.0.0.1:${gw.port}/ai`, apiKey: 'client-key', maxRetries: 0, timeout: 20_000 });
  });
  after(async () => {
    await gw?.close();
    await provider?.close();
  });

  it('counts 1.9 MB of one character promptly while other requests are served', async () => {
    const report = await probeWhile(
      () => anthropic.messages.countTokens({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a'.repeat(1_900_000) }] }),
      probe,
    );
    assert.equal(report.hostile.status, 'fulfilled', String((report.hostile as PromiseRejectedResult).reason));
    const counted = (report.hostile as PromiseFulfilledResult<{ input_tokens: number }>).value.input_tokens;
    assert.ok(counted > 100_000, `count ${counted}`);
    assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${report.worstProbeMs.toFixed(0)} ms`);
  });

  it('answers a huge non-streamed provider answer with 502 in the client format, memory flat', async () => {
    await probe();
    const before = await rssMiB(gw.pid);
    const report = await probeWhile(() => openai.chat.completions.create({ model: 'huge', messages: [{ role: 'user', content: 'hi' }] }), probe, { maxMs: 20_000 });
    const grown = (await rssMiB(gw.pid)) - before;
    assert.equal(report.hostile.status, 'rejected');
    const err = (report.hostile as PromiseRejectedResult).reason as InstanceType<typeof OpenAI.APIError>;
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 502);
    assert.match(err.message, /larger than/);
    assert.ok(grown < 120, `RSS grew ${grown.toFixed(0)} MiB for a ${HUGE_BYTES >> 20} MiB answer`);
    assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${report.worstProbeMs.toFixed(0)} ms`);
  });

  it('refuses 100k-deep JSON with 400 in the client format', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    for (const [path, shape] of [['/ai/v1/chat/completions', /"error":\{"message":"request body nests/], ['/ai/v1/messages', /"type":"error","error":\{"type":"invalid_request_error"/]] as const) {
      const r = await gw.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"model":"m","messages":${deep}}` });
      assert.equal(r.status, 400, `${path}: ${r.text.slice(0, 200)}`);
      assert.match(r.text, shape);
    }
  });

  it('records the 502 a translated route sent for a provider 200 that is not JSON', async () => {
    const [ok0, bad0] = [await requestsTotal(gw.metricsPort, 200), await requestsTotal(gw.metricsPort, 502)];
    await assert.rejects(anthropic.messages.create({ model: 'not-json', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => (e as { status?: number }).status === 502);
    // The metric is recorded when the response is done: give it a moment.
    await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(await requestsTotal(gw.metricsPort, 502), bad0 + 1);
    assert.equal(await requestsTotal(gw.metricsPort, 200), ok0);
  });

  it('masks the gateway key a provider error echoes, buffered and streamed, translated and not', async () => {
    const calls: [string, () => Promise<unknown>][] = [
      ['chat', () => openai.chat.completions.create({ model: 'echo-key', messages: [{ role: 'user', content: 'hi' }] })],
      ['chat stream', () => openai.chat.completions.create({ model: 'echo-key', stream: true, messages: [{ role: 'user', content: 'hi' }] })],
      ['messages (translated)', () => anthropic.messages.create({ model: 'echo-key', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })],
      ['messages stream (translated)', () => anthropic.messages.create({ model: 'echo-key', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] })],
    ];
    for (const [name, call] of calls) {
      const err = await call().then(() => undefined, (e: unknown) => e as { status?: number; message?: string });
      assert.equal(err?.status, 401, name);
      assert.ok(!String(err?.message).includes(KEY), `${name}: ${err?.message}`);
      assert.match(String(err?.message), /\[redacted\]/, name);
    }
  });
});
