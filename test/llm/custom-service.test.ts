/**
 * A custom provider given as a Service backendRef, as users run vLLM or Ollama in a cluster: the
 * gateway reaches the Service's ready replicas (its EndpointSlices) in turn — with no cluster DNS,
 * as in embedded mode — sends the Service's name as Host, and leaves out a replica that is not
 * ready. Clients: the openai SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { unusedPort } from '../support/ports.ts';
import { llmGatewayYaml, ROUTES } from './gateway-yaml.ts';
import { startMockProvider, streamFixture, type MockProvider } from './mock-provider.ts';

const completion = (who: string) => ({
  status: 200,
  body: { id: `chatcmpl-${who}`, object: 'chat.completion', created: 1, model: 'llama', choices: [{ index: 0, message: { role: 'assistant', content: `from ${who}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
});

/** One EndpointSlice per replica: each listens on its own local port. */
function slice(name: string, replica: { host: string; port: number }, ready = true, service = 'vllm'): string {
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}, labels: { kubernetes.io/service-name: ${service} } }
addressType: IPv4
ports: [{ name: http, port: ${replica.port} }]
endpoints: [{ addresses: [${replica.host}], conditions: { ready: ${ready} } }]
`;
}

/** A local port that was free a moment ago and has nothing listening now. */
describe('custom provider behind a Service', () => {
  let replicas: MockProvider[];
  let gw: GatewayHarness;
  /** A port nothing listens on: a replica that refuses connections. */
  let deadPort: number;

  before(async () => {
    replicas = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider()]);
    replicas.forEach((r, i) => r.answer('/v1/chat/completions', (req) => (req.json().stream === true ? streamFixture('openai-text-usage') : completion(['a', 'b', 'not-ready'][i]))));
    deadPort = await unusedPort();
    gw = await startGateway(llmGatewayYaml([{ name: 'local', prefix: '/local' }, { name: 'flaky', prefix: '/flaky' }], [
      `apiVersion: v1
kind: Service
metadata: { name: vllm }
spec: { ports: [{ name: http, port: 8000 }] }
`,
      slice('vllm-a', replicas[0]),
      slice('vllm-b', replicas[1]),
      slice('vllm-c', replicas[2], false),
      `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: local }
spec:
  ai:
    provider:
      custom: { backendRef: { name: vllm, port: 8000 }, formats: [{ type: Completions }] }
  policies:
    ai: { routes: ${ROUTES} }
`,
      `apiVersion: v1
kind: Service
metadata: { name: flaky }
spec: { ports: [{ name: http, port: 8000 }] }
`,
      slice('flaky-dead', { host: '127.0.0.1', port: deadPort }, true, 'flaky'),
      slice('flaky-live', replicas[1], true, 'flaky'),
      `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: flaky }
spec:
  ai:
    provider:
      custom: { backendRef: { name: flaky, port: 8000 }, formats: [{ type: Completions }] }
  policies:
    ai: { routes: ${ROUTES} }
`,
    ].join('---\n')));
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all(replicas.map((r) => r.stop()));
  });

  it('spreads requests over the ready replicas, with the Service name as Host', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/local/v1'), maxRetries: 0 });
    const answers: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] });
      answers.push(r.choices[0].message.content ?? '');
    }
    assert.deepEqual(answers.toSorted(), ['from a', 'from a', 'from b', 'from b']);
    assert.equal(replicas[2].requests.length, 0, 'the replica that is not ready got nothing');
    for (const r of replicas.slice(0, 2)) {
      assert.ok(r.requests.every((req) => req.headers.host === 'vllm.default.svc.cluster.local:8000'), `Host header: ${r.requests.map((q) => q.headers.host).join(', ')}`);
    }
  });

  it('sends the request to another replica when one refuses the connection', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/flaky/v1'), maxRetries: 0 });
    for (let i = 0; i < 4; i++) {
      const r = await client.chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(r.choices[0].message.content, 'from b');
    }
    const stream = await client.chat.completions.create({ model: 'llama', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.ok(text.length > 0, 'the stream came from the live replica');
  });
});
