/**
 * A client that gives up mid-request: the gateway must drop its provider request too (a provider
 * keeps generating, and billing, for an abandoned request otherwise), streaming or not, and stay
 * healthy for the next client.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';

describe('LLM client going away', () => {
  let provider: http.Server;
  let gw: GatewayHarness;
  /** Request paths whose connection closed before the provider answered. */
  const abandoned: string[] = [];
  let received = 0;

  before(async () => {
    provider = http.createServer((req, res) => {
      received++;
      req.resume();
      res.on('close', () => {
        if (!res.writableEnded) abandoned.push(req.url ?? '');
      });
      const body: string[] = [];
      req.on('data', (c: Buffer) => body.push(c.toString()));
      req.on('end', () => {
        const text = body.join('');
        if (text.includes('"answer-me"')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'answer-me', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
          return;
        }
        // A stream that starts and then never ends; a non-streaming request that never answers.
        if (text.includes('"stream":true')) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify({ id: 'c2', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'hel' }, finish_reason: null }] })}\n\n`);
        }
      });
    });
    provider.listen(0, '127.0.0.1');
    await once(provider, 'listening');
    const port = (provider.address() as AddressInfo).port;
    gw = await startGateway(llmGatewayYaml([{ name: 'openai', prefix: '/openai' }], `
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: openai }
spec:
  ai:
    provider: { providerA: {}, host: 127.0.0.1, port: ${port} }
  policies:
    auth: { key: sk-test }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    provider.closeAllConnections();
    provider.close();
  });

  /** Sends a chat request and destroys it once the provider has it (and, streaming, once the first bytes arrived). */
  async function abandon(path: string, stream: boolean): Promise<void> {
    const before = received;
    const req = http.request(gw.url(80, path), { method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'm', stream, messages: [{ role: 'user', content: 'hi' }] }));
    if (stream) {
      const [res] = (await once(req, 'response')) as [http.IncomingMessage];
      await once(res, 'data');
    } else {
      for (let i = 0; i < 200 && received === before; i++) await new Promise((ok) => setTimeout(ok, 5));
    }
    req.destroy();
  }

  async function waitForAbandoned(path: string): Promise<void> {
    for (let i = 0; i < 200 && !abandoned.includes(path); i++) await new Promise((ok) => setTimeout(ok, 10));
    assert.ok(abandoned.includes(path), `the provider's request for ${path} was dropped`);
  }

  const rows = [
    { name: 'non-streaming, while waiting for the provider', stream: false },
    { name: 'streaming, after the first event', stream: true },
  ];
  for (const row of rows) {
    it(`drops the provider request: ${row.name}`, async () => {
      abandoned.length = 0;
      await abandon('/openai/v1/chat/completions', row.stream);
      await waitForAbandoned('/v1/chat/completions');
      // The gateway is still fine for the next client.
      const ok = await gw.request(80, { method: 'POST', path: '/openai/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'answer-me', messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(ok.status, 200);
      assert.equal((JSON.parse(ok.text) as { choices: { message: { content: string } }[] }).choices[0].message.content, 'ok');
    });
  }
});
