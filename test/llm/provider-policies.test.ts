/**
 * Each provider of an `ai` ProxyBackend gets its effective backend policy as the translator merged
 * it member by member (test/golden/policy/ai-backend-policy-merge.yaml: a ProxyPolicy naming the
 * provider by sectionName adds members, the backend's inline policies win over it, the provider's
 * own inline policies win over both); the LLM handler only looks it up in the
 * route policy's `subBackends`. A provider nothing names gets the route policy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../support/gateway.ts';
import { ROUTES, llmGatewayYaml } from './gateway-yaml.ts';
import { responseFixture, startMockProvider, type MockProvider, type RecordedRequest } from './mock-provider.ts';

describe('per-provider backend policies on an ai backend (official OpenAI SDK)', () => {
  let named: MockProvider;
  let plain: MockProvider;
  let gw: GatewayHarness;

  const chat = (prefix: string) =>
    new OpenAI({ apiKey: 'sk-client', baseURL: gw.url(80, prefix), maxRetries: 0 })
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
  const last = (at: MockProvider): RecordedRequest => {
    const r = at.requests.at(-1);
    assert.ok(r, 'the provider saw a request');
    return r;
  };

  before(async () => {
    [named, plain] = await Promise.all([startMockProvider(), startMockProvider()]);
    named.answer('/', responseFixture('openai-tool-calls'));
    plain.answer('/', responseFixture('openai-tool-calls'));
    gw = await startGateway(llmGatewayYaml([{ name: 'tiers', prefix: '/tiers' }, { name: 'single', prefix: '/single' }], `apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tiers }
spec:
  ai:
    groups:
      - providers:
          - name: primary
            providerA: {}
            host: ${named.host}
            port: ${named.port}
            policies:
              ai: { routes: ${ROUTES}, overrides: [{ field: max_tokens, value: 77 }] }
  policies:
    ai: { routes: ${ROUTES} }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: primary-key }
spec:
  targetRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tiers, sectionName: primary }]
  backend: { auth: { key: sk-section }, transformation: { request: { set: [{ name: x-provider-step, value: '"on"' }], remove: [x-strip] } } }
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: single }
spec:
  ai:
    provider: { providerA: {}, host: ${plain.host}, port: ${plain.port} }
  policies:
    auth: { key: sk-single }
    ai: { routes: ${ROUTES} }
`));
    assert.deepEqual(gw.applyErrors, []);
  });
  after(async () => {
    await gw?.close();
    await Promise.all([named?.stop(), plain?.stop()]);
  });

  it('a provider named by sectionName and with inline policies: the sectionName key and its own ai member', async () => {
    await chat('/tiers');
    const sent = last(named);
    assert.equal(sent.headers.authorization, 'Bearer sk-section');
    assert.equal(sent.json().max_tokens, 77);
  });

  it('request steps set only on a provider (a sectionName transformation) run for that provider, not refused for want of a request context', async () => {
    await chat('/tiers');
    assert.equal(last(named).headers['x-provider-step'], 'on');
  });

  it('a provider nothing names does not get another provider\'s steps', async () => {
    await chat('/single');
    assert.equal(last(plain).headers['x-provider-step'], undefined);
  });

  it('a provider nothing names: the route policy', async () => {
    await chat('/single');
    const sent = last(plain);
    assert.equal(sent.headers.authorization, 'Bearer sk-single');
    assert.equal(sent.json().max_tokens, 5);
  });
});
