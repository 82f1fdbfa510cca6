/**
 * ProxyModels attached to a Gateway (docs/models.md "Attaching models"): a model with a Gateway
 * parentRef joins the models rule of a route attached to that Gateway; at equal patterns the model
 * attached to the rule itself wins over the Gateway's. Each model is a Custom model on a Service
 * whose ready endpoint is a fake vendor. Client: the openai SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startMockProvider, vendorService, type MockProvider } from './mock-provider.ts';


function model(name: string, parent: string, service: string, match: string, created: string): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: ${name}, creationTimestamp: "${created}" }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, ${parent} }]
  match: { model: "${match}" }
  provider: Custom
  custom: { backendRef: { name: ${service}, port: 8000 }, formats: [{ type: Completions }] }
`;
}

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: models }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /v1 } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyModel, name: "*" }]
`;

describe('ProxyModel: Gateway parents', () => {
  let vendors: MockProvider[];
  let gw: GatewayHarness;

  before(async () => {
    vendors = await Promise.all([startMockProvider(), startMockProvider()]);
    vendors.forEach((v, i) => v.answer('/v1/chat/completions', (req) => ({
      status: 200,
      body: { id: 'c', object: 'chat.completion', created: 1, model: req.json().model, choices: [{ index: 0, message: { role: 'assistant', content: `from ${['gateway', 'rule'][i]}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
    })));
    gw = await startGateway([
      httpGateway(), ROUTE, vendorService('on-gateway', vendors[0]), vendorService('on-rule', vendors[1]),
      // Older, attached to the Gateway: everything no nearer model takes.
      model('shared', 'kind: Gateway, name: gw', 'on-gateway', '*', '2026-01-01T00:00:00Z'),
      model('gateway-llama', 'kind: Gateway, name: gw', 'on-gateway', 'llama-*', '2026-01-01T00:00:00Z'),
      // Newer, attached to the rule, the same pattern as gateway-llama: it wins.
      model('rule-llama', 'kind: HTTPRoute, name: models', 'on-rule', 'llama-*', '2026-06-01T00:00:00Z'),
    ].join('---\n'), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all(vendors.map((v) => v.stop()));
  });

  it('a model attached to the Gateway is served on the route attached to it, and says so per parent', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'mistral-large', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.choices[0].message.content, 'from gateway');
    const status = gw.statuses().find((s) => s.kind === 'ProxyModel' && s.metadata.name === 'shared');
    assert.match(JSON.stringify(status?.status), /"kind":"Gateway".*"type":"Accepted","status":"True"/);
  });

  it('at equal patterns the model attached to the rule wins over the Gateway\'s, though newer', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'llama-3.3-70b', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.choices[0].message.content, 'from rule');
  });
});
