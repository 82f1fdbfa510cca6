/**
 * The ProxyModel SSRF guard at connect time (docs/models.md, "Vendors and baseURL"): a baseURL
 * naming a loopback address is refused by the translator; one whose *name* only resolves to
 * loopback passes that check and is refused by the proxy when it connects — the vendor double
 * on 127.0.0.1 is never reached. A Custom model on a Service (the operator's own choice, SPEC.md)
 * reaches the same double. The name is this machine's host name when it resolves to loopback
 * (as /etc/hosts usually says); elsewhere the case is skipped. Client: the openai SDK.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startMockProvider, type MockProvider } from './mock-provider.ts';

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: models }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /v1 } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyModel, name: "*" }]
`;

function manifests(vendor: MockProvider, loopbackName: string): string {
  return [httpGateway(), ROUTE, `apiVersion: v1
kind: Service
metadata: { name: vendor }
spec: { ports: [{ name: http, port: 8000 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: vendor-1, labels: { kubernetes.io/service-name: vendor } }
addressType: IPv4
ports: [{ name: http, port: ${vendor.port} }]
endpoints: [{ addresses: [${vendor.host}], conditions: { ready: true } }]
`, `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: sneaky }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  provider: Ollama
  baseURL: http://${loopbackName}:${vendor.port}/v1
`, `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: in-cluster }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  provider: Custom
  custom: { backendRef: { name: vendor, port: 8000 }, formats: [{ type: Completions }] }
`].join('---\n');
}

describe('ProxyModel: the SSRF guard at connect time', async () => {
  const name = hostname();
  const resolved = await lookup(name, { all: true }).catch(() => []);
  const loopback = resolved.length > 0 && resolved.every((a) => a.address.startsWith('127.') || a.address === '::1');
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    if (!loopback) return;
    vendor = await startMockProvider();
    vendor.answer('/v1/chat/completions', (req) => ({ status: 200, body: { id: 'c', object: 'chat.completion', created: 1, model: req.json().model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } }));
    gw = await startGateway(manifests(vendor, name), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await vendor?.stop();
  });

  it(`a baseURL whose name (${name}) resolves to loopback passes the translator, and the proxy refuses to connect`, { skip: loopback ? false : `${name} does not resolve to loopback here` }, async () => {
    const accepted = gw.statuses().find((s) => s.kind === 'ProxyModel' && s.metadata.name === 'sneaky');
    assert.match(JSON.stringify(accepted?.status), /"type":"Accepted","status":"True"/);
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'sneaky', messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => err instanceof OpenAI.APIError && err.status === 502 && err.code === 'upstream_connect_failed');
    assert.equal(vendor.requests.length, 0, 'the double on loopback was never reached');
  });

  it('a Custom model on a Service reaches the same address (the operator chose it)', { skip: loopback ? false : `${name} does not resolve to loopback here` }, async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'in-cluster', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.choices[0].message.content, 'hi');
    assert.equal(vendor.requests.length, 1);
  });
});
