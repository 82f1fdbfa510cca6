/**
 * `/v1/models` on a plain `ai` backend (no ProxyModel; docs/llm.md): a priority group answers the
 * union of its providers' models (each provider's pinned model and its aliases), in the group's
 * order, the same list on every call whichever provider the rotation picked; no vendor is asked.
 * The providers are taken in plain rotation (SWITCHBOARD_LLM_PROVIDER_CHOICE=rotation, read when the
 * handler module loads, hence the dynamic import), so consecutive calls land on different providers.
 * Client: the openai SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { GatewayHarness } from '../support/gateway.ts';
import { httpGateway } from '../support/manifests.ts';
import { startMockProvider, type MockProvider } from './mock-provider.ts';

function backend(a: MockProvider, b: MockProvider, c: MockProvider): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: llm }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /v1 } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: pool }]
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: pool }
spec:
  ai:
    groups:
      - providers:
          - { name: east, providerA: { model: gpt-4o }, host: ${a.host}, port: ${a.port} }
          - { name: west, providerA: { model: gpt-4o-mini }, host: ${b.host}, port: ${b.port} }
          - { name: spare, providerA: { model: gpt-4o }, host: ${b.host}, port: ${b.port} }
      - providers:
          - { name: backup, providerD: { model: claude-sonnet-4-5 }, host: ${c.host}, port: ${c.port} }
  policies:
    ai:
      routes: { /chat/completions: Completions, /models: Models }
      modelAliases: { fast: gpt-4o-mini }
`;
}

describe('/v1/models on an ai backend: the union of the priority group, stable between calls', () => {
  let vendors: MockProvider[];
  let gw: GatewayHarness;

  before(async () => {
    process.env.SWITCHBOARD_LLM_PROVIDER_CHOICE = 'rotation';
    const { startGateway } = await import('../support/gateway.ts');
    vendors = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider()]);
    gw = await startGateway(`${httpGateway()}---\n${backend(vendors[0], vendors[1], vendors[2])}`);
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    delete process.env.SWITCHBOARD_LLM_PROVIDER_CHOICE;
    await gw?.close();
    await Promise.all(vendors.map((v) => v.stop()));
  });

  it('lists every model of the first group (pinned models and aliases, each once), the same on consecutive calls', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const lists: string[][] = [];
    // More calls than providers in the group: the rotation visits each of them.
    for (let call = 0; call < 4; call++) {
      const ids: string[] = [];
      for await (const m of client.models.list()) ids.push(m.id);
      lists.push(ids);
    }
    for (const ids of lists) assert.deepEqual(ids, ['gpt-4o', 'fast', 'gpt-4o-mini']);
    assert.ok(vendors.every((v) => v.requests.length === 0), 'no vendor is asked');
  });

  it('answers Anthropic clients the same union in their page shape', async () => {
    const pages = await Promise.all([0, 1, 2].map(() => gw.request(80, { path: '/v1/models', headers: { 'anthropic-version': '2023-06-01' } })));
    for (const res of pages) {
      const page = JSON.parse(res.text) as { data: { id: string }[]; first_id: string; last_id: string; has_more: boolean };
      assert.deepEqual(page.data.map((m) => m.id), ['gpt-4o', 'fast', 'gpt-4o-mini']);
      assert.deepEqual([page.first_id, page.last_id, page.has_more], ['gpt-4o', 'gpt-4o-mini', false]);
    }
  });
});
