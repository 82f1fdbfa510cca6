/**
 * Realtime through a listening gateway: the official `openai` SDK's realtime WebSocket client
 * (openai/realtime/ws, over wss to an HTTPS listener) and a plain `ws` client reach a local
 * provider speaking OpenAI's Realtime events. The provider sees the backend's key (never the
 * client's), the pinned model or Azure deployment in the query, and the subprotocols without the
 * browser-style key; refusals come back as HTTP answers in OpenAI's error format.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import WebSocket from 'ws';
import { createCertificate } from '../support/certs.ts';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { tlsSecret } from '../support/manifests.ts';
import { REALTIME_USAGE, startMockRealtime, type MockRealtime } from './mock-realtime.ts';

const ROUTES = '{ /v1/realtime: Realtime, /v1/chat/completions: Completions }';
const BACKENDS = ['openai', 'azure', 'anthropic', 'badkey', 'down', 'local'] as const;
const CERT = await createCertificate(['localhost']);

function yaml(mock: MockRealtime, downPort: number): string {
  const backend = (name: string, provider: string, auth: string) => `---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: ${name} }
spec:
  ai:
    provider: { ${provider}, host: ${mock.host}, port: ${name === 'down' ? downPort : mock.port} }
  policies:
    auth: ${auth}
    ai: { routes: ${ROUTES} }
`;
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: switchboard }
spec: { controllerName: switchboard.dev/gateway-controller }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: switchboard
  listeners:
    - { name: http, port: 80, protocol: HTTP }
    - { name: https, port: 443, protocol: HTTPS, tls: { certificateRefs: [{ name: rt-cert }] } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules:
${BACKENDS.map((b) => `    - matches: [{ path: { type: PathPrefix, value: /${b} } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: ${b} }]`).join('\n')}
---
apiVersion: v1
kind: Secret
metadata: { name: openai }
stringData: { Authorization: "Bearer sk-gateway" }
${tlsSecret('rt-cert', CERT)}
${backend('openai', 'providerA: { model: gpt-realtime-pinned }', '{ secretRef: { name: openai } }')}
${backend('azure', 'providerB: { endpoint: "https://acme.openai.azure.com/", apiVersion: 2025-04-01-preview, deploymentName: rt-dep }', '{ key: az-key }')}
${backend('anthropic', 'providerD: {}', '{ key: sk-ant }')}
${backend('badkey', 'providerA: {}', '{ key: sk-wrong }')}
${backend('down', 'providerA: {}', '{ key: sk-gateway }')}
---
apiVersion: v1
kind: Service
metadata: { name: rt }
spec: { ports: [{ name: http, port: 8000 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: rt-a, labels: { kubernetes.io/service-name: rt } }
addressType: IPv4
ports: [{ name: http, port: ${mock.port} }]
endpoints: [{ addresses: [${mock.host}] }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: local }
spec:
  ai:
    provider: { custom: { backendRef: { name: rt, port: 8000 }, formats: [{ type: Realtime }] } }
  policies:
    auth: { key: sk-gateway }
    ai: { routes: ${ROUTES} }
`;
}

interface Message { readonly data: Buffer; readonly isBinary: boolean }
interface Session { readonly ws: WebSocket; next(): Promise<Message> }
type Opened = Session | { status: number; body: string };

/** Opens a WebSocket through the gateway (messages queued from the start); a refused handshake resolves with its status and body. */
function open(url: string, protocols: string[] = [], headers: Record<string, string> = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    const queue: Message[] = [];
    const waiting: ((m: Message) => void)[] = [];
    ws.on('message', (data, isBinary) => {
      const m = { data: Buffer.from(data as Buffer), isBinary };
      const w = waiting.shift();
      if (w) w(m);
      else queue.push(m);
    });
    const next = () => new Promise<Message>((res, rej) => {
      const queued = queue.shift();
      if (queued) return res(queued);
      const timer = setTimeout(() => rej(new Error('no message within 5 s')), 5000);
      waiting.push((m) => {
        clearTimeout(timer);
        res(m);
      });
    });
    ws.once('open', () => resolve({ ws, next }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

describe('LLM Realtime WebSockets through the gateway', () => {
  let mock: MockRealtime;
  let gw: GatewayHarness;

  before(async () => {
    mock = await startMockRealtime((h) => h.authorization === 'Bearer sk-gateway' || h['api-key'] === 'az-key');
    // Port 1: nothing listens there, so the `down` backend's connection is refused.
    gw = await startGateway(yaml(mock, 1));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await mock?.stop();
  });

  it('the openai SDK (OpenAIRealtimeWS over wss) gets a session; the provider sees the backend key and the pinned model', async () => {
    const client = new OpenAI({ apiKey: 'sk-client-should-not-travel', baseURL: `https://127.0.0.1:${gw.portOf(443)}/openai/v1` });
    // Trust the test certificate and check it against its name (the socket goes to 127.0.0.1); ws passes both to tls.connect.
    const tls = { ca: CERT.certPem, servername: 'localhost' };
    const rt = new OpenAIRealtimeWS({ model: 'gpt-4o-realtime-preview', options: tls }, client);
    const errors: unknown[] = [];
    rt.on('error', (e) => errors.push(e));
    try {
      const created = await new Promise<{ session: { model?: string } }>((resolve, reject) => {
        rt.on('session.created', (e) => resolve(e as unknown as { session: { model?: string } }));
        rt.socket.once('error', reject);
      });
      let text = '';
      rt.on('response.output_text.delta', (e) => (text += e.delta));
      const done = new Promise<{ response: { usage?: { total_tokens?: number } } }>((resolve) => rt.on('response.done', (e) => resolve(e)));
      rt.send({ type: 'response.create', response: { output_modalities: ['text'] } });
      const finished = await done;

      const hs = mock.handshakes.at(-1)!;
      assert.equal(hs.url, '/v1/realtime?model=gpt-realtime-pinned');
      assert.equal(hs.headers.authorization, 'Bearer sk-gateway');
      assert.equal(created.session.model, 'gpt-realtime-pinned');
      assert.equal(text, 'Hello from gpt-realtime-pinned');
      assert.equal(finished.response.usage?.total_tokens, REALTIME_USAGE.total_tokens);
      assert.deepEqual(JSON.parse(mock.received.at(-1) as string), { type: 'response.create', response: { output_modalities: ['text'] } });
      assert.deepEqual(errors, []);
    } finally {
      rt.close();
    }
  });

  it('Azure preview: /openai/realtime with api-version and deployment, api-key header, the browser key subprotocol dropped, binary stays binary', async () => {
    const opened = await open(`ws://127.0.0.1:${gw.portOf(80)}/azure/openai/v1/realtime?model=whatever`, ['realtime', 'openai-insecure-api-key.sk-browser'], { authorization: 'Bearer sk-client' });
    assert.ok('ws' in opened, `refused: ${JSON.stringify(opened)}`);
    const { ws } = opened;
    try {
      const hello = await opened.next();
      assert.equal(hello.isBinary, false);
      assert.equal((JSON.parse(hello.data.toString()) as { type: string }).type, 'session.created');
      const hs = mock.handshakes.at(-1)!;
      assert.equal(hs.url, '/openai/realtime?api-version=2025-04-01-preview&deployment=rt-dep&model=whatever');
      assert.equal(hs.headers['api-key'], 'az-key');
      assert.equal(hs.headers.authorization, undefined, "the client's Authorization is not forwarded");
      assert.equal(hs.headers['sec-websocket-protocol'], 'realtime');
      assert.equal(ws.protocol, 'realtime', 'the subprotocol the provider chose reaches the client');
      ws.send(Buffer.from([0, 1, 2, 255]), { binary: true });
      const echoed = await opened.next();
      assert.equal(echoed.isBinary, true);
      assert.deepEqual([...echoed.data], [0, 1, 2, 255]);
    } finally {
      ws.close();
    }
  });

  it('a custom provider behind a Service is dialled at its replica, with the Service name as Host', async () => {
    const opened = await open(`ws://127.0.0.1:${gw.portOf(80)}/local/v1/realtime?model=local-rt`);
    assert.ok('ws' in opened, `the handshake was refused: ${'status' in opened ? `${opened.status} ${opened.body}` : ''}`);
    try {
      const hs = mock.handshakes.at(-1)!;
      assert.equal(hs.url, '/v1/realtime?model=local-rt');
      assert.equal(hs.headers.host, 'rt.default.svc.cluster.local:8000');
      assert.equal(hs.headers.authorization, 'Bearer sk-gateway');
    } finally {
      opened.ws.close();
    }
  });

  const refusals = [
    { name: 'a provider without a realtime API answers 501', path: '/anthropic/v1/realtime?model=claude', status: 501, message: /Realtime is not supported/ },
    { name: "the provider's refusal (401, bad backend key) comes back with its status and body", path: '/badkey/v1/realtime?model=m', status: 401, message: /Incorrect API key/ },
    { name: 'an unreachable provider answers 502', path: '/down/v1/realtime?model=m', status: 502, message: /could not reach the provider/ },
    { name: 'an upgrade on a non-Realtime route answers 400', path: '/openai/v1/chat/completions', status: 400, message: /only the Realtime route/ },
  ];
  for (const c of refusals) {
    it(c.name, async () => {
      const opened = await open(`ws://127.0.0.1:${gw.portOf(80)}${c.path}`);
      assert.ok('status' in opened, 'the handshake must be refused');
      assert.equal(opened.status, c.status);
      const body = JSON.parse(opened.body) as { error: { message: string; type: string } };
      assert.match(body.error.message, c.message);
    });
  }
});
