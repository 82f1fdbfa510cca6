/**
 * Realtime handshakes feed provider health like HTTP attempts (docs/llm.md, "Provider health"):
 * through a listening gateway with a plain `ws` client, a backend whose first priority group's
 * provider refuses the upgrade with 429 and Retry-After and whose second is a local realtime
 * provider. The refusal evicts the first for that long (the next session goes straight to the
 * second); the opened handshake counts as a success with its latency.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import WebSocket from 'ws';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/api/gateway/object.ts';
import { silentLogger } from '../../src/common/logger.ts';
import { translate } from '../../src/controller/translate/index.ts';
import { ProxyRuntime } from '../../src/proxy/runtime.ts';
import { httpGateway } from '../support/manifests.ts';
import { startMockRealtime, type MockRealtime } from './mock-realtime.ts';

describe('Realtime handshakes feed provider health', () => {
  let limited: Server;
  let limitedHandshakes = 0;
  let mock: MockRealtime;
  let runtime: ProxyRuntime;
  let gatewayPort: number;

  before(async () => {
    limited = createServer((_req, res) => res.writeHead(404).end());
    limited.on('upgrade', (_req, socket) => {
      limitedHandshakes++;
      const body = '{"error":{"message":"slow down","type":"rate_limit"}}';
      socket.end(`HTTP/1.1 429 Too Many Requests\r\nretry-after: 30\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
    });
    await new Promise<void>((resolve) => limited.listen(0, '127.0.0.1', resolve));
    mock = await startMockRealtime(() => true);
    const yaml = httpGateway() + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: rt }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ matches: [{ path: { type: PathPrefix, value: /rt } }], backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: rt }] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: rt }
spec:
  ai:
    groups:
      - providers: [{ name: a, providerA: {}, host: 127.0.0.1, port: ${(limited.address() as AddressInfo).port} }]
      - providers: [{ name: b, providerA: {}, host: 127.0.0.1, port: ${mock.port} }]
  policies:
    auth: { key: sk-gateway }
    ai: { routes: { /v1/realtime: Realtime } }
`;
    const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject).filter(Boolean);
    const { config } = translate(objects);
    runtime = new ProxyRuntime({ logger: silentLogger, registry: new Registry(), bindAddress: '127.0.0.1', listenPort: () => 0 });
    assert.deepEqual((await runtime.apply(config)).errors, []);
    gatewayPort = runtime.portOf(80) as number;
  });
  after(async () => {
    await runtime?.close({ graceMs: 0 });
    await mock?.stop();
    await new Promise((resolve) => limited?.close(resolve));
  });

  /** Opens a session, waits for the provider's greeting and closes it. */
  async function session(): Promise<void> {
    const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/rt/v1/realtime?model=gpt-realtime`, ['realtime']);
    const first = await new Promise<string>((resolve, reject) => {
      ws.once('message', (data) => resolve(String(data)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    });
    assert.equal((JSON.parse(first) as { type: string }).type, 'session.created');
    ws.close();
  }
  const providers = () => Object.fromEntries((runtime.providerHealth().find((b) => b.backend.endsWith('/rt'))?.providers ?? []).map((p) => [p.provider, p]));

  it('a 429 with Retry-After on the handshake evicts the provider for that long; the opened one is a success with its latency', async () => {
    await session();
    assert.equal(limitedHandshakes, 1);
    const view = providers();
    assert.equal(view.a?.timesEvicted, 1, JSON.stringify(view));
    assert.ok(view.a?.evictedUntil !== null && view.a?.evictedUntil !== undefined && view.a.evictedUntil - Date.now() > 25_000, JSON.stringify(view.a));
    assert.ok((view.a?.score ?? 100) < 100, 'the refusal is a failure');
    assert.equal(view.b?.score, 100);
    assert.ok((view.b?.latencyMs ?? 0) > 0, `the opened handshake's latency is measured: ${JSON.stringify(view.b)}`);
    assert.equal(view.a?.inflight, 0);
    assert.equal(view.b?.inflight, 0);
    await session();
    assert.equal(limitedHandshakes, 1, 'the evicted provider is not tried for the next session');
    assert.equal(mock.handshakes.length, 2);
  });
});
