import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CelInput } from '../../../cel/index.ts';
import type { AiPolicy, RouteType } from '../../../ir/ai.ts';
import { AiPolicyError, applyFinalTransformations, applyRequestPolicy, compileAiPolicy, hasRequestPolicy } from './body-policy.ts';

type Body = Record<string, unknown>;
const CEL: CelInput = { request: { method: 'POST', url: '/v1/chat/completions', headers: { 'x-user': 'ada' } } };
const user = (content: string) => ({ role: 'user', content });

function apply(policy: AiPolicy, body: Body, route: RouteType = 'Completions'): Body {
  return applyRequestPolicy(body, route, compileAiPolicy(policy), CEL);
}

describe('applyRequestPolicy: defaults, overrides, transformations', () => {
  const cases: { name: string; policy: AiPolicy; body: Body; expect: Body }[] = [
    { name: 'a default fills a missing field', policy: { defaults: [{ field: 'temperature', value: 0.5 }] }, body: { model: 'm' }, expect: { model: 'm', temperature: 0.5 } },
    { name: 'the client value beats a default', policy: { defaults: [{ field: 'temperature', value: 0.5 }] }, body: { temperature: 0.2 }, expect: { temperature: 0.2 } },
    { name: "a client's explicit null counts as set", policy: { defaults: [{ field: 'user', value: 'x' }] }, body: { user: null }, expect: { user: null } },
    { name: 'defaults take any JSON value', policy: { defaults: [{ field: 'metadata', value: { team: 'a', tags: [1, 2] } }] }, body: {}, expect: { metadata: { team: 'a', tags: [1, 2] } } },
    { name: 'an override replaces the client value', policy: { overrides: [{ field: 'max_tokens', value: 100 }] }, body: { max_tokens: 9000 }, expect: { max_tokens: 100 } },
    { name: 'an override beats a default of the same field', policy: { defaults: [{ field: 'n', value: 1 }], overrides: [{ field: 'n', value: 2 }] }, body: {}, expect: { n: 2 } },
    {
      name: 'a transformation beats an override of the same field',
      policy: { overrides: [{ field: 'user', value: 'override' }], transformations: [{ field: 'user', expression: '"cel"' }] },
      body: { user: 'client' },
      expect: { user: 'cel' },
    },
    {
      name: 'transformations see the body after defaults and overrides',
      policy: { defaults: [{ field: 'a', value: 2 }], overrides: [{ field: 'b', value: 3 }], transformations: [{ field: 'product', expression: 'json(request.body).a * json(request.body).b' }] },
      body: { b: 100 },
      expect: { a: 2, b: 3, product: 6 },
    },
    {
      name: 'transformations see the request headers',
      policy: { transformations: [{ field: 'user', expression: 'request.headers["x-user"]' }] },
      body: {},
      expect: { user: 'ada' },
    },
    {
      name: 'every transformation sees the same body (not each other’s results)',
      policy: { transformations: [{ field: 'a', expression: '1' }, { field: 'b', expression: '"a" in json(request.body) ? "saw a" : "no a"' }] },
      body: {},
      expect: { a: 1, b: 'no a' },
    },
    { name: 'unknown fields survive', policy: { overrides: [{ field: 'x', value: 1 }] }, body: { vendor_extension: { k: true } }, expect: { vendor_extension: { k: true }, x: 1 } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(apply(c.policy, c.body), c.expect));

  it('leaves the input body unchanged', () => {
    const body = { messages: [user('hi')], temperature: 1 };
    const copy = structuredClone(body);
    apply({ prompt: { prepend: [{ role: 'system', content: 's' }] }, overrides: [{ field: 'temperature', value: 0 }] }, body);
    assert.deepEqual(body, copy);
  });

  it('a transformation that fails on this request is a 400', () => {
    assert.throws(() => apply({ transformations: [{ field: 'x', expression: 'json(request.body).missing.deeper' }] }, {}), (e: unknown) => e instanceof AiPolicyError && e.status === 400);
  });

  it('an expression that does not compile makes the policy invalid: 500 (fail closed)', () => {
    assert.throws(() => compileAiPolicy({ transformations: [{ field: 'x', expression: '1 +' }] }), (e: unknown) => e instanceof AiPolicyError && e.status === 500);
  });

  it('compiles each policy object once', () => {
    const policy: AiPolicy = { transformations: [{ field: 'x', expression: '1' }] };
    assert.equal(compileAiPolicy(policy), compileAiPolicy(policy));
  });
});

describe('applyRequestPolicy: prompt enrichment', () => {
  const sys = (content: string) => ({ role: 'system', content });
  const prompt = { prepend: [sys('be brief'), user('context')], append: [sys('answer in French'), user('last word')] };
  const cases: { name: string; route: RouteType; body: Body; expect: Body }[] = [
    {
      name: 'chat completions: messages before and after the conversation',
      route: 'Completions',
      body: { model: 'm', messages: [user('hi')] },
      expect: { model: 'm', messages: [sys('be brief'), user('context'), user('hi'), sys('answer in French'), user('last word')] },
    },
    {
      name: 'messages: system entries join a string system prompt in order (prepend, client, append); turns go around the conversation',
      route: 'Messages',
      body: { system: 'client system', messages: [user('hi')] },
      expect: { system: 'be brief\n\nclient system\n\nanswer in French', messages: [user('context'), user('hi'), user('last word')] },
    },
    {
      name: 'messages without a system prompt get one',
      route: 'Messages',
      body: { messages: [user('hi')] },
      expect: { system: 'be brief\n\nanswer in French', messages: [user('context'), user('hi'), user('last word')] },
    },
    {
      name: 'messages with system blocks: text blocks before and after the client blocks',
      route: 'Messages',
      body: { system: [{ type: 'text', text: 'client', cache_control: { type: 'ephemeral' } }], messages: [user('hi')] },
      expect: {
        system: [{ type: 'text', text: 'be brief' }, { type: 'text', text: 'client', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'answer in French' }],
        messages: [user('context'), user('hi'), user('last word')],
      },
    },
    {
      name: 'responses: a string input becomes a user message between the prompt messages',
      route: 'Responses',
      body: { input: 'hi' },
      expect: { input: [sys('be brief'), user('context'), user('hi'), sys('answer in French'), user('last word')] },
    },
    {
      name: 'responses: an item list keeps its items',
      route: 'Responses',
      body: { input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] },
      expect: { input: [sys('be brief'), user('context'), { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }, sys('answer in French'), user('last word')] },
    },
    { name: 'embeddings are not a chat route: untouched', route: 'Embeddings', body: { input: 'hi' }, expect: { input: 'hi' } },
    { name: 'token count is not a chat route: untouched', route: 'TokenCount', body: { messages: [user('hi')] }, expect: { messages: [user('hi')] } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(apply({ prompt }, c.body, c.route), c.expect));

  it('messages: a prompt without system entries leaves the system prompt as it was', () => {
    assert.deepEqual(apply({ prompt: { prepend: [user('ctx')] } }, { system: 'keep', messages: [user('hi')] }, 'Messages'), { system: 'keep', messages: [user('ctx'), user('hi')] });
  });

  it('the prompt is added before defaults and overrides, so transformations see it', () => {
    const out = apply({ prompt: { prepend: [sys('s')] }, transformations: [{ field: 'count', expression: 'size(json(request.body).messages)' }] }, { messages: [user('hi')] });
    assert.equal(out.count, 2);
  });
});

describe('applyFinalTransformations and hasRequestPolicy', () => {
  it('final transformations set provider-format fields on the upstream body', () => {
    const compiled = compileAiPolicy({ finalTransformations: [{ field: 'anthropic_beta', expression: '["x"]' }] });
    assert.deepEqual(applyFinalTransformations({ max_tokens: 10 }, compiled, CEL), { max_tokens: 10, anthropic_beta: ['x'] });
  });

  const cases: { name: string; policy: AiPolicy; expect: boolean }[] = [
    { name: 'an empty policy changes nothing', policy: {}, expect: false },
    { name: 'aliases and routes are the planner’s business', policy: { modelAliases: { a: 'b' }, routes: { '*': 'Completions' } }, expect: false },
    { name: 'final transformations alone do not touch the client body', policy: { finalTransformations: [{ field: 'x', expression: '1' }] }, expect: false },
    { name: 'a prompt does', policy: { prompt: { prepend: [user('x')] } }, expect: true },
    { name: 'defaults do', policy: { defaults: [{ field: 'x', value: 1 }] }, expect: true },
    { name: 'overrides do', policy: { overrides: [{ field: 'x', value: 1 }] }, expect: true },
    { name: 'transformations do', policy: { transformations: [{ field: 'x', expression: '1' }] }, expect: true },
  ];
  for (const c of cases) it(`hasRequestPolicy: ${c.name}`, () => assert.equal(hasRequestPolicy(compileAiPolicy(c.policy)), c.expect));
});
