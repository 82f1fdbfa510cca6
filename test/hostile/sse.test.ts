/**
 * Hostile upstream streams: a provider that sends one SSE event of 64 MiB with no terminator, in
 * many small chunks. Before the linear parser this rescanned the growing event on every chunk
 * (quadratic) and held all of it; now the event passes the 8 MiB limit, the client gets an error
 * event in its own format promptly, the upstream is dropped, ordinary requests are not held up
 * and memory stays bounded.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startEchoServer, type EchoServer } from '../support/echo-server.ts';
import { gateway, gatewayClass, prefixRoute, service } from '../support/manifests.ts';
import { keyedAiBackend, keysSecret } from '../llm/gateway-yaml.ts';
import type { TestResponse } from '../support/client.ts';
import { PROMPT_MS, probeWhile, rssMiB, startHostileGateway, type HostileGateway } from './harness.ts';

const EVENT_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024;

/** An Anthropic-format provider whose stream starts normally, then never ends its next event. */
async function startEndlessEventProvider(): Promise<{ port: number; sent: () => number; close: () => Promise<void> }> {
  let sent = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"claude","usage":{"input_tokens":1,"output_tokens":0}}}\n\n');
      res.write('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"');
      const chunk = Buffer.alloc(CHUNK_BYTES, 'x');
      let written = 0;
      const pump = (): void => {
        while (written < EVENT_BYTES && !res.destroyed) {
          written += CHUNK_BYTES;
          sent += CHUNK_BYTES;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    sent: () => sent,
    close: () => new Promise((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
  };
}

describe('hostile SSE from an LLM provider', () => {
  let echo: EchoServer;
  let provider: Awaited<ReturnType<typeof startEndlessEventProvider>>;
  let gw: HostileGateway;
  before(async () => {
    echo = await startEchoServer('echo');
    provider = await startEndlessEventProvider();
    const yaml = gatewayClass() + gateway('gw', [{ name: 'http', port: 65000 }]).replace('port: 65000', 'port: {{listener.port}}')
      + service('echo', echo) + prefixRoute('plain', '/plain', 'echo') + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /ai } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: anthropic }]
---
${keysSecret({ anthropic: 'sk-test' })}---
${keyedAiBackend('anthropic', 'providerD: {}', { host: '127.0.0.1', port: provider.port })}`;
    gw = await startHostileGateway(yaml);
  });
  after(async () => { await gw?.close(); await provider?.close(); await echo?.close(); });

  it('a 64 MiB event without a terminator ends the stream with an error event; ordinary requests stay prompt; memory stays bounded', async () => {
    await gw.request({ path: '/plain/warm' });
    const rssBefore = await rssMiB(gw.pid);
    const t0 = performance.now();
    const report = await probeWhile(
      () => gw.request({
        path: '/ai/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      }),
      () => gw.request({ path: '/plain/probe' }),
    );
    const elapsedMs = performance.now() - t0;
    const rssAfter = await rssMiB(gw.pid);
    assert.equal(report.hostile.status, 'fulfilled', String((report.hostile as PromiseRejectedResult).reason));
    const answer = (report.hostile as PromiseFulfilledResult<TestResponse>).value;
    assert.equal(answer.status, 200, `the stream had started: ${answer.text.slice(0, 300)}`);
    assert.match(answer.text, /data: \{"error":\{.*larger than the gateway accepts/);
    assert.ok(elapsedMs < 5_000, `the client waited ${Math.round(elapsedMs)} ms for the error`);
    assert.ok(report.worstProbeMs < PROMPT_MS, `worst probe ${Math.round(report.worstProbeMs)} ms`);
    assert.ok(provider.sent() < EVENT_BYTES, `the gateway read the whole ${provider.sent()} bytes instead of dropping the upstream`);
    assert.ok(rssAfter - rssBefore < 150, `RSS grew ${rssBefore} → ${rssAfter} MiB`);
  });
});
