/** WebSocket upgrades pass through the gateway to the routed backend, both directions. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { gateway, gatewayClass, service } from '../support/manifests.ts';
import { startWebSocketEcho, type WebSocketEchoServer, type WebSocketHello } from '../support/ws-echo.ts';

const MESSAGE_TIMEOUT_MS = 5_000;

/** Connects, collects the greeting plus `replies` echoes of the messages sent, then closes. */
async function converse(url: string, host: string, messages: string[]): Promise<string[]> {
  const socket = new WebSocket(url, { headers: { host } });
  const received: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${received.length} messages within ${MESSAGE_TIMEOUT_MS} ms`)), MESSAGE_TIMEOUT_MS);
      socket.on('error', (err) => { clearTimeout(timer); reject(err); });
      socket.on('unexpected-response', (_req, res) => { clearTimeout(timer); reject(new Error(`upgrade refused with ${res.statusCode}`)); });
      socket.on('message', (data) => {
        received.push(String(data));
        if (received.length === 1) for (const m of messages) socket.send(m);
        if (received.length === messages.length + 1) { clearTimeout(timer); resolve(); }
      });
    });
  } finally {
    socket.terminate();
  }
  return received;
}

describe('WebSocket upgrade', () => {
  let upstream: WebSocketEchoServer;
  let gw: GatewayHarness;

  before(async () => {
    upstream = await startWebSocketEcho('ws-echo');
    gw = await startGateway(gatewayClass() + service('ws-echo', upstream) + gateway('gw', [{ name: 'http', port: 80 }]) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: websocket, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [ws.example.com]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /ws } }]
      backendRefs: [{ name: ws-echo, port: 8080 }]
`);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('upgrades through the route and echoes messages both ways', async () => {
    const [greeting, ...echoes] = await converse(gw.url(80, '/ws/chat?room=7').replace('http:', 'ws:'), 'ws.example.com', ['hello', 'world']);
    const hello = JSON.parse(greeting) as WebSocketHello;
    assert.equal(hello.server, 'ws-echo');
    assert.equal(hello.path, '/ws/chat?room=7');
    assert.equal(hello.headers.host, 'ws.example.com');
    assert.deepEqual(echoes, ['hello', 'world']);
  });

  it('refuses an upgrade no route matches', async () => {
    await assert.rejects(converse(gw.url(80, '/elsewhere').replace('http:', 'ws:'), 'ws.example.com', []), /upgrade refused with 404/);
  });
});
