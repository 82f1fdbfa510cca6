/**
 * ProxyModel (docs/models.md): one endpoint, models on three fake vendors, the request's `model`
 * choosing the vendor — exact name, a suffix wildcard, `*` for the rest, an Internal model no
 * client can reach. The models attach to an HTTPRoute rule whose single backendRef is the
 * ProxyModel backend `*`; each is a Custom model on a Service (the mocks listen on loopback, which
 * a baseURL may not name: SSRF guard). Clients: the openai SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startMockProvider, vendorService, type MockProvider } from './mock-provider.ts';

const completion = (who: string, model: unknown) => ({
  status: 200,
  body: { id: `chatcmpl-${who}`, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: `from ${who}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
});


function model(name: string, service: string, extra = ''): string {
  return `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: ${name} }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  provider: Custom
  custom: { backendRef: { name: ${service}, port: 8000 }, formats: [{ type: Completions }] }
${extra}`;
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

function manifests(vendors: readonly MockProvider[]): string {
  return [
    httpGateway(),
    ROUTE,
    vendorService('vendor-a', vendors[0]),
    vendorService('vendor-b', vendors[1]),
    vendorService('vendor-c', vendors[2]),
    model('gpt-4o', 'vendor-a'),
    model('gpt-family', 'vendor-b', '  match: { model: "gpt-*" }\n'),
    model('everything-else', 'vendor-c', '  match: { model: "*" }\n'),
    model('secret', 'vendor-a', '  match: { model: "secret-*" }\n  visibility: Internal\n'),
  ].join('---\n');
}

describe('ProxyModel: route by model name', () => {
  let vendors: MockProvider[];
  let gw: GatewayHarness;

  before(async () => {
    vendors = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider()]);
    vendors.forEach((v, i) => v.answer('/v1/chat/completions', (req) => completion(['a', 'b', 'c'][i], req.json().model)));
    gw = await startGateway(manifests(vendors), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all(vendors.map((v) => v.stop()));
  });

  it('one endpoint: the model name picks the vendor, most specific match first', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const ask = async (name: string) => (await client.chat.completions.create({ model: name, messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content;
    assert.equal(await ask('gpt-4o'), 'from a', 'exact name (the object name) beats gpt-*');
    assert.equal(await ask('gpt-4o-mini'), 'from b', 'gpt-* beats *');
    assert.equal(await ask('claude-sonnet'), 'from c', '* takes the rest');
    assert.equal(await ask('secret-1'), 'from c', 'an Internal model is not requestable: * answers');
    // The vendor got the client's model as it was (no virtual-model rewrite).
    assert.deepEqual(vendors[1].requests.map((r) => r.json().model), ['gpt-4o-mini']);
  });

  it('status: each model Accepted=True on its HTTPRoute parent', () => {
    for (const name of ['gpt-4o', 'gpt-family', 'everything-else', 'secret']) {
      const parents = gw.statusOf('ProxyModel', name).parents as { conditions: { type: string; status: string }[] }[];
      assert.equal(parents.length, 1, name);
      assert.deepEqual(parents[0].conditions.map((c) => [c.type, c.status]), [['Accepted', 'True']], name);
    }
  });
});

describe('ProxyModel: no model matches', () => {
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    vendor = await startMockProvider();
    vendor.answer('/v1/chat/completions', (req) => completion('a', req.json().model));
    gw = await startGateway([httpGateway(), ROUTE, vendorService('vendor-a', vendor), model('gpt-4o', 'vendor-a')].join('---\n'), { proxyModels: true });
  });

  after(async () => {
    await gw?.close();
    await vendor.stop();
  });

  it('answers 404 model_not_found in OpenAI\'s shape and calls no vendor', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'o3', messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.equal(err.code, 'model_not_found');
      return true;
    });
    assert.equal(vendor.requests.length, 0);
  });
});

describe('ProxyModel: the API off (no --enable-proxy-models)', () => {
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    vendor = await startMockProvider();
    gw = await startGateway([httpGateway(), ROUTE, vendorService('vendor-a', vendor), model('gpt-4o', 'vendor-a')].join('---\n'));
  });

  after(async () => {
    await gw?.close();
    await vendor.stop();
  });

  it('serves nothing, and both the model and the route say why', async () => {
    const res = await gw.request(80, { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [] }) });
    assert.ok(res.status >= 500, `status ${res.status}`);
    assert.equal(vendor.requests.length, 0);
    const parents = gw.statusOf('ProxyModel', 'gpt-4o').parents as { conditions: { status: string; message: string }[] }[];
    assert.equal(parents[0].conditions[0].status, 'False');
    assert.match(parents[0].conditions[0].message, /ProxyModel API is disabled/);
    const route = JSON.stringify(gw.statusOf('HTTPRoute', 'models'));
    assert.match(route, /ProxyModel API is disabled/);
  });
});

describe('ProxyModel: a failover virtual model', () => {
  let vendors: MockProvider[];
  let gw: GatewayHarness;

  before(async () => {
    vendors = await Promise.all([startMockProvider(), startMockProvider()]);
    vendors[0].answer('/v1/chat/completions', { status: 500, body: { error: { message: 'primary down', type: 'server_error' } } });
    vendors[1].answer('/v1/chat/completions', (req) => completion('backup', req.json().model));
    gw = await startGateway([
      httpGateway(), ROUTE, vendorService('vendor-a', vendors[0]), vendorService('vendor-b', vendors[1]),
      model('primary', 'vendor-a', '  match: { model: gpt-4o }\n  visibility: Internal\n'),
      model('backup', 'vendor-b', '  match: { model: "llama-*" }\n  visibility: Internal\n'),
      `apiVersion: switchboard.dev/v1alpha1
kind: ProxyModel
metadata: { name: smart }
spec:
  parentRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  virtualModel:
    failover:
      targets:
        - { modelRef: { name: backup }, model: llama-3-70b, priority: 10 }
        - { modelRef: { name: primary }, priority: 0 }
`,
    ].join('---\n'), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all(vendors.map((v) => v.stop()));
  });

  it('survives its primary\'s 500s: the lower priority is tried first, each target gets its own model name', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const r = await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(r.choices[0].message.content, 'from backup');
    }
    assert.ok(vendors[0].requests.length >= 1, 'the primary (priority 0) was tried first');
    assert.ok(vendors[0].requests.every((r) => r.json().model === 'gpt-4o'), 'the primary got its exact match as the model');
    assert.deepEqual(vendors[1].requests.map((r) => r.json().model), ['llama-3-70b', 'llama-3-70b', 'llama-3-70b']);
    const parents = gw.statusOf('ProxyModel', 'smart').parents as { conditions: { status: string }[] }[];
    assert.equal(parents[0].conditions[0].status, 'True');
  });

  it('the Internal targets are not requestable by name', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }), OpenAI.NotFoundError);
  });
});

describe('ProxyModel: /v1/models', () => {
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    vendor = await startMockProvider();
    gw = await startGateway([
      httpGateway(), ROUTE, vendorService('vendor-a', vendor),
      model('gpt-4o', 'vendor-a'),
      model('claude', 'vendor-a', '  match: { model: claude-sonnet-4 }\n'),
      model('family', 'vendor-a', '  match: { model: "gpt-*" }\n'),
      model('hidden', 'vendor-a', '  match: { model: secret-model }\n  visibility: Internal\n'),
    ].join('---\n'), { proxyModels: true });
  });

  after(async () => {
    await gw?.close();
    await vendor.stop();
  });

  it('lists exactly the public models a client can name, in OpenAI\'s and Anthropic\'s shapes, asking no vendor', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert.deepEqual(ids, ['claude-sonnet-4', 'gpt-4o']);
    const res = await gw.request(80, { path: '/v1/models', headers: { 'anthropic-version': '2023-06-01' } });
    const page = JSON.parse(res.text) as { data: { type: string; id: string }[]; has_more: boolean };
    assert.deepEqual(page.data.map((m) => [m.type, m.id]), [['model', 'claude-sonnet-4'], ['model', 'gpt-4o']]);
    assert.equal(page.has_more, false);
    assert.equal(vendor.requests.length, 0);
  });
});
