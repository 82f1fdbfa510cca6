/**
 * A ProxyModel's ai fields (`transformations`, `finalTransformations`, `promptGuard`) merge over a
 * route policy's `backend.ai` field by field (SPEC.md ModelPolicies: they are top-level fields of
 * the model's policies, and policies merge per top-level field; docs/models.md "Model policies"):
 * a model that sets only `transformations` keeps the route's Reject prompt guard; a model that
 * sets its own `promptGuard` replaces the route's guard, for its requests only. Official OpenAI SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';
import { startMockProvider, type MockProvider } from '../../llm/mock-provider.ts';
import { acceptedOf, completion, customModel, MODELS_ROUTE, vendorService } from './fixtures.ts';

/** The route's own guard: a request mentioning `secret-<digits>` is refused 422. */
const ROUTE_GUARD = `apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: models-guard }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: models }]
  backend:
    ai:
      promptGuard:
        request:
          - regex: { matches: ['secret-[0-9]+'], action: Reject }
            response: { message: route guard, statusCode: 422 }
`;

describe('ProxyModel: a model\'s ai fields over the route policy\'s backend.ai, field by field', () => {
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    vendor = await startMockProvider();
    vendor.answer('/v1/chat/completions', (req) => completion('a', req.json().model));
    gw = await startGateway([
      httpGateway(), MODELS_ROUTE, vendorService('vendor-a', vendor), ROUTE_GUARD,
      customModel('plain', 'vendor-a'),
      customModel('shaped', 'vendor-a', `  policies:
    transformations: [{ field: user, expression: '"shaped-by-model"' }]
`),
      customModel('own-guard', 'vendor-a', `  policies:
    promptGuard:
      request:
        - regex: { matches: ['forbidden'], action: Reject }
          response: { message: model guard, statusCode: 451 }
`),
    ].join('---\n'), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await vendor.stop();
  });

  const openai = () => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, '/v1'), maxRetries: 0 });
  const chat = (model: string, content: string) => openai().chat.completions.create({ model, messages: [{ role: 'user', content }] });
  const refused = async (model: string, content: string, status: number, message: RegExp) => {
    await assert.rejects(chat(model, content), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, status);
      assert.match(err.message, message);
      return true;
    });
  };

  it('a model without policies: the route guard rejects', async () => {
    vendor.requests.splice(0);
    await refused('plain', 'my code is secret-42', 422, /route guard/);
    assert.equal(vendor.requests.length, 0);
  });

  it('a model that sets only transformations: the route guard still rejects, the vendor never called', async () => {
    vendor.requests.splice(0);
    await refused('shaped', 'my code is secret-42', 422, /route guard/);
    assert.equal(vendor.requests.length, 0);
  });

  it('a model that sets only transformations: a request the guard allows gets the model\'s transformation', async () => {
    vendor.requests.splice(0);
    const answer = await chat('shaped', 'nothing to hide');
    assert.equal(answer.choices[0].message.content, 'from a');
    assert.equal(vendor.requests[0].json().user, 'shaped-by-model');
  });

  it('a model with its own promptGuard: its guard replaces the route\'s for its requests', async () => {
    vendor.requests.splice(0);
    await refused('own-guard', 'this is forbidden', 451, /model guard/);
    const answer = await chat('own-guard', 'my code is secret-42');
    assert.equal(answer.choices[0].message.content, 'from a');
    assert.equal(vendor.requests.length, 1);
  });

  it('the IR: the shaped model\'s provider policy holds both fields, sourced from both objects; the own-guard model\'s only its own', () => {
    const rule = Object.values(gw.config.routes).flatMap((r) => r.rules).find((r) => r.backends.some((b) => b.backendPolicy?.subBackends));
    const subs = rule?.backends[0]?.backendPolicy?.subBackends ?? {};
    const shaped = subs['default/shaped'];
    assert.deepEqual(Object.keys(shaped?.ai ?? {}).sort(), ['promptGuard', 'transformations']);
    assert.deepEqual(shaped?.sources.ai, ['ProxyPolicy/default/models-guard', 'ProxyModel/default/shaped']);
    // Every field of the route's ai replaced: the model's ai alone, sourced from the model alone.
    assert.deepEqual(subs['default/own-guard']?.sources.ai, ['ProxyModel/default/own-guard']);
  });

  it('status: every model Accepted=True', () => {
    for (const name of ['plain', 'shaped', 'own-guard']) assert.deepEqual(acceptedOf(gw.statusOf('ProxyModel', name)), ['True Accepted'], name);
  });
});
