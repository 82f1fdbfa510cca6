/**
 * ProxyModel virtual models end to end (docs/models.md), with the official SDKs: a conditional
 * model choosing its target by a request header (openai and @anthropic-ai/sdk), a weighted model
 * splitting between two fake vendors, and a failover model surviving its primary's 500s
 * (@anthropic-ai/sdk, translated to the vendors' OpenAI shape).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';
import { startMockProvider, type MockProvider } from '../../llm/mock-provider.ts';
import { acceptedOf, completion, customModel, MODELS_ROUTE, vendorService, virtualModel } from './fixtures.ts';

const internal = (model: string) => `  match: { model: "${model}" }\n  visibility: Internal\n`;

describe('ProxyModel: virtual models with the official SDKs', () => {
  let vendors: MockProvider[];
  let gw: GatewayHarness;

  before(async () => {
    vendors = await Promise.all([startMockProvider(), startMockProvider(), startMockProvider()]);
    vendors.forEach((v, i) => v.answer('/v1/chat/completions', (req) => completion(['a', 'b', 'c'][i], req.json().model)));
    gw = await startGateway([
      httpGateway(), MODELS_ROUTE,
      vendorService('vendor-a', vendors[0]), vendorService('vendor-b', vendors[1]), vendorService('vendor-c', vendors[2]),
      customModel('premium', 'vendor-a', internal('gpt-4o')),
      customModel('budget', 'vendor-b', internal('llama-*')),
      customModel('spare', 'vendor-c', internal('spare-1')),
      virtualModel('tiered', `    conditional:
      targets:
        - { modelRef: { name: premium }, when: 'request.headers["x-tier"] == "gold"' }
        - { modelRef: { name: spare }, when: 'llm.requestModel == "never"' }
        - { modelRef: { name: budget }, model: llama-3.1-8b }`),
      virtualModel('gold-only', `    conditional:
      targets:
        - { modelRef: { name: premium }, when: 'request.headers["x-tier"] == "gold"' }`),
      virtualModel('split', `    weighted:
      targets:
        - { modelRef: { name: premium }, weight: 3 }
        - { modelRef: { name: budget }, model: llama-3.3-70b, weight: 1 }
        - { modelRef: { name: spare }, weight: 0 }`),
    ].join('---\n'), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all(vendors.map((v) => v.stop()));
  });

  const reset = () => vendors.forEach((v) => v.requests.splice(0));

  it('conditional (openai): the header chooses the target, the fallback takes the rest, each target gets its own model name', async () => {
    reset();
    const gold = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0, defaultHeaders: { 'x-tier': 'gold' } });
    const plain = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const ask = async (client: OpenAI) => (await client.chat.completions.create({ model: 'tiered', messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content;
    assert.equal(await ask(gold), 'from a');
    assert.equal(await ask(plain), 'from b', 'no x-tier header: the condition fails, the fallback answers');
    assert.deepEqual(vendors[0].requests.map((r) => r.json().model), ['gpt-4o']);
    assert.deepEqual(vendors[1].requests.map((r) => r.json().model), ['llama-3.1-8b']);
    assert.equal(vendors[2].requests.length, 0);
  });

  it('conditional (@anthropic-ai/sdk): the same choice for a Messages request', async () => {
    reset();
    const client = new Anthropic({ apiKey: 'unused', baseURL: gw.url(80), maxRetries: 0 });
    const ask = async (tier: string) => {
      const message = await client.messages.create({ model: 'tiered', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-tier': tier } });
      return message.content[0].type === 'text' ? message.content[0].text : '';
    };
    assert.equal(await ask('gold'), 'from a');
    assert.equal(await ask('silver'), 'from b');
  });

  it('conditional without a fallback: no condition holding is 404 model_not_found, no vendor called', async () => {
    reset();
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'gold-only', messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.equal(err.code, 'model_not_found');
      return true;
    });
    assert.equal(vendors.reduce((n, v) => n + v.requests.length, 0), 0);
  });

  it('weighted: 3:1 between two vendors over 200 requests (within ±30), a weight 0 target never called', async () => {
    reset();
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
    const N = 200;
    for (let i = 0; i < N; i++) await client.chat.completions.create({ model: 'split', messages: [{ role: 'user', content: 'hi' }] });
    const [a, b, c] = vendors.map((v) => v.requests.length);
    assert.equal(a + b, N);
    assert.equal(c, 0);
    // Expected 150 / 50; the binomial standard deviation is about 6, so ±30 fails only on a broken split.
    assert.ok(Math.abs(a - 150) <= 30, `premium got ${a} of ${N}`);
    assert.ok(vendors[1].requests.every((r) => r.json().model === 'llama-3.3-70b'));
  });

  it('status: every virtual model Accepted=True', () => {
    for (const name of ['tiered', 'gold-only', 'split']) assert.deepEqual(acceptedOf(gw.statusOf('ProxyModel', name)), ['True Accepted'], name);
  });
});

describe('ProxyModel: failover with @anthropic-ai/sdk', () => {
  let vendors: MockProvider[];
  let gw: GatewayHarness;

  before(async () => {
    vendors = await Promise.all([startMockProvider(), startMockProvider()]);
    vendors[0].answer('/v1/chat/completions', { status: 500, body: { error: { message: 'primary down', type: 'server_error' } } });
    vendors[1].answer('/v1/chat/completions', (req) => completion('backup', req.json().model));
    gw = await startGateway([
      httpGateway(), MODELS_ROUTE, vendorService('vendor-a', vendors[0]), vendorService('vendor-b', vendors[1]),
      customModel('primary', 'vendor-a', internal('claude-sonnet-4')),
      customModel('backup', 'vendor-b', internal('llama-*')),
      virtualModel('resilient', `    failover:
      targets:
        - { modelRef: { name: backup }, model: llama-3-70b, priority: 10 }
        - { modelRef: { name: primary }, priority: 0 }`),
    ].join('---\n'), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await Promise.all(vendors.map((v) => v.stop()));
  });

  it("survives the primary's 500s: the backup answers every request", async () => {
    const client = new Anthropic({ apiKey: 'unused', baseURL: gw.url(80), maxRetries: 0 });
    for (let i = 0; i < 3; i++) {
      const message = await client.messages.create({ model: 'resilient', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      assert.deepEqual(message.content.map((c) => (c.type === 'text' ? c.text : c.type)), ['from backup']);
    }
    assert.ok(vendors[0].requests.length >= 1, 'the primary (priority 0) was tried first');
    assert.deepEqual(vendors[1].requests.map((r) => r.json().model), ['llama-3-70b', 'llama-3-70b', 'llama-3-70b']);
  });
});
