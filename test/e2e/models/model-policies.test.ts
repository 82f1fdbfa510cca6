/**
 * A ProxyModel's own `policies` end to end (docs/models.md "Model policies"), with the official
 * SDKs: authorization per model (403 in the client's format, no vendor called), request and
 * response header changes, a prompt guard rejecting a request, the vendor credential from a
 * Secret, and a virtual model whose policies apply over its target's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startGateway, type GatewayHarness } from '../../support/gateway.ts';
import { httpGateway } from '../../support/manifests.ts';
import { startMockProvider, type MockProvider } from '../../llm/mock-provider.ts';
import { acceptedOf, completion, customModel, MODELS_ROUTE, vendorService, virtualModel } from './fixtures.ts';

const KEY_SECRET = `apiVersion: v1
kind: Secret
metadata: { name: vendor-key }
stringData: { Authorization: sk-model-key }
`;

describe('ProxyModel: a model\'s own policies', () => {
  let vendor: MockProvider;
  let gw: GatewayHarness;

  before(async () => {
    vendor = await startMockProvider();
    vendor.answer('/v1/chat/completions', (req) => completion('a', req.json().model));
    gw = await startGateway([
      httpGateway(), MODELS_ROUTE, vendorService('vendor-a', vendor), KEY_SECRET,
      customModel('team-model', 'vendor-a', `  policies:
    authorization: { policy: { matchExpressions: ['request.headers["x-team"] == "red"'] } }
`),
      customModel('headed', 'vendor-a', `  policies:
    auth: { secretRef: { name: vendor-key } }
    headers:
      request: { set: [{ name: x-model-team, value: 'blue "quoted"' }], remove: [x-debug] }
      response: { add: [{ name: x-served-by, value: headed }] }
`),
      customModel('guarded', 'vendor-a', `  policies:
    promptGuard:
      request:
        - regex: { matches: ['secret-[0-9]+'], action: Reject }
          response: { message: no secrets, statusCode: 422 }
`),
      customModel('target', 'vendor-a', `  match: { model: gpt-4o }
  visibility: Internal
  policies:
    headers: { request: { set: [{ name: x-layer, value: target }, { name: x-target-only, value: kept }] } }
`),
      virtualModel('front', `    weighted:
      targets: [{ modelRef: { name: target } }]`, `  policies:
    headers: { request: { set: [{ name: x-layer, value: virtual }] } }
    authorization: { policy: { matchExpressions: ['request.headers["x-team"] == "red"'] } }
`),
    ].join('---\n'), { proxyModels: true });
    assert.deepEqual(gw.applyErrors, []);
  });

  after(async () => {
    await gw?.close();
    await vendor.stop();
  });

  const openai = (headers: Record<string, string> = {}) => new OpenAI({ apiKey: 'client-key', baseURL: gw.url(80, '/v1'), maxRetries: 0, defaultHeaders: headers });
  const chat = (model: string, content = 'hi') => ({ model, messages: [{ role: 'user' as const, content }] });

  it('authorization: a request the model\'s rule allows is served; another is 403 forbidden (openai), no vendor called', async () => {
    vendor.requests.splice(0);
    const allowed = await openai({ 'x-team': 'red' }).chat.completions.create(chat('team-model'));
    assert.equal(allowed.choices[0].message.content, 'from a');
    await assert.rejects(openai({ 'x-team': 'green' }).chat.completions.create(chat('team-model')), (err: unknown) => {
      assert.ok(err instanceof OpenAI.PermissionDeniedError, String(err));
      assert.equal(err.code, 'forbidden');
      return true;
    });
    await assert.rejects(openai().chat.completions.create(chat('team-model')), OpenAI.PermissionDeniedError, 'no header: the rule fails, which does not allow');
    assert.equal(vendor.requests.length, 1);
  });

  it('authorization: the denial in Anthropic\'s format for @anthropic-ai/sdk', async () => {
    const client = new Anthropic({ apiKey: 'client-key', baseURL: gw.url(80), maxRetries: 0 });
    await assert.rejects(client.messages.create({ model: 'team-model', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.PermissionDeniedError, String(err));
      assert.equal((err.error as { error?: { type?: string } }).error?.type, 'permission_error');
      return true;
    });
  });

  it('headers and auth: the vendor gets the set header (not the removed one) and the Secret\'s key; the client gets the added response header', async () => {
    vendor.requests.splice(0);
    const { data, response } = await openai({ 'x-debug': '1' }).chat.completions.create(chat('headed')).withResponse();
    assert.equal(data.choices[0].message.content, 'from a');
    assert.equal(response.headers.get('x-served-by'), 'headed');
    const seen = vendor.requests[0].headers;
    assert.equal(seen['x-model-team'], 'blue "quoted"');
    assert.equal(seen['x-debug'], undefined);
    assert.equal(seen.authorization, 'Bearer sk-model-key', 'the model\'s credential, not the client\'s');
  });

  it('promptGuard: a request the guard rejects is answered with its status and message, the vendor never called', async () => {
    vendor.requests.splice(0);
    await assert.rejects(openai().chat.completions.create(chat('guarded', 'my code is secret-42')), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, 422);
      assert.match(err.message, /no secrets/);
      return true;
    });
    assert.equal(vendor.requests.length, 0);
    const fine = await openai().chat.completions.create(chat('guarded', 'nothing to hide'));
    assert.equal(fine.choices[0].message.content, 'from a');
  });

  it('a virtual model: its own authorization, and its headers member over its target\'s (member by member: the target\'s header set is replaced)', async () => {
    vendor.requests.splice(0);
    await assert.rejects(openai().chat.completions.create(chat('front')), OpenAI.PermissionDeniedError);
    await openai({ 'x-team': 'red' }).chat.completions.create(chat('front'));
    assert.equal(vendor.requests.length, 1);
    const seen = vendor.requests[0];
    assert.equal(seen.json().model, 'gpt-4o');
    assert.equal(seen.headers['x-layer'], 'virtual');
    assert.equal(seen.headers['x-target-only'], undefined, 'the virtual model\'s headers replace the target\'s whole headers member');
  });

  it('status: every model Accepted=True', () => {
    for (const name of ['team-model', 'headed', 'guarded', 'target', 'front']) assert.deepEqual(acceptedOf(gw.statusOf('ProxyModel', name)), ['True Accepted'], name);
  });
});
