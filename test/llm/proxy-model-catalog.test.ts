/**
 * The model catalog end to end (docs/models.md "The model catalog"): the Gateway's own
 * ProxyParameters name a ConfigMap holding a vendor's /v1/models answer; `GET /v1/models` on the
 * models rule lists the exact Public models and the catalog entries a client could request
 * (a Public `gpt-*` model serves `gpt-4o-mini`; `secret-x` only an Internal model matches;
 * `claude-3` nothing matches), with the catalog's metadata, and asks no vendor. Client: the
 * openai SDK (and Anthropic's page shape by header).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { startMockProvider, type MockProvider } from './mock-provider.ts';

function manifests(vendor: MockProvider): string {
  const model = (name: string, extra: string) => `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: ${name} }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  provider: Custom
  custom: { backendRef: { name: vendor, port: 8000 }, formats: [{ type: Completions }] }
${extra}`;
  return [`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: switchboard }
spec: { controllerName: switchboard.dev/gateway-controller }
`, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: switchboard
  infrastructure: { parametersRef: { group: switchboard.dev, kind: ProxyParameters, name: gw-params } }
  listeners: [{ name: http, port: 80, protocol: HTTP }]
`, `apiVersion: switchboard.dev/v1alpha1
kind: ProxyParameters
metadata: { name: gw-params }
spec: { modelCatalog: { sources: [{ configMap: { name: vendor-models } }] } }
`, `apiVersion: v1
kind: ConfigMap
metadata: { name: vendor-models }
data:
  catalog.json: '{"object":"list","data":[{"id":"gpt-4o","owned_by":"openai","created":1715367049},{"id":"gpt-4o-mini","owned_by":"openai","created":1721172741},{"id":"secret-x"},{"id":"claude-3"}]}'
`, `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: models }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /v1 } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyModel, name: "*" }]
`, `apiVersion: v1
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
`,
  model('gpt-4o', ''),
  model('gpt-family', '  match: { model: "gpt-*" }\n'),
  model('hidden', '  match: { model: "secret-*" }\n  visibility: Internal\n'),
  ].join('---\n');
}

describe('ProxyModel: /v1/models with the Gateway\'s model catalog', () => {
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    vendor = await startMockProvider();
    gw = await startGateway(manifests(vendor), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await vendor.stop();
  });

  it('lists the exact Public models and the requestable catalog entries, with the catalog\'s metadata, asking no vendor', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const models: { id: string; owned_by: string; created: number }[] = [];
    for await (const m of client.models.list()) models.push({ id: m.id, owned_by: m.owned_by, created: m.created });
    assert.deepEqual(models, [
      { id: 'gpt-4o', owned_by: 'openai', created: 1715367049 },
      { id: 'gpt-4o-mini', owned_by: 'openai', created: 1721172741 },
    ]);
    const res = await gw.request(80, { path: '/v1/models', headers: { 'anthropic-version': '2023-06-01' } });
    const page = JSON.parse(res.text) as { data: { id: string; created_at: string }[] };
    assert.deepEqual(page.data.map((m) => [m.id, m.created_at]), [['gpt-4o', '2024-05-10T18:50:49Z'], ['gpt-4o-mini', '2024-07-16T23:32:21Z']]);
    assert.equal(vendor.requests.length, 0);
    const params = gw.statuses().find((s) => s.kind === 'ProxyParameters');
    assert.match(JSON.stringify(params?.status), /"type":"Accepted","status":"True".*"type":"ResolvedRefs","status":"True"/);
  });
});
