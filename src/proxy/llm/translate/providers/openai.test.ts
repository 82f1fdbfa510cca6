import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deterministicContext } from '../context.ts';
import type { LLMProvider } from '../config.ts';
import { planRequest, type ForwardPlan } from '../plan.ts';
import type { RouteType } from '../../../../ir/ai.ts';

const ctx = deterministicContext();

function upstreamBody(provider: LLMProvider, routeType: RouteType, body: Record<string, unknown>): { raw: Buffer; sent: Record<string, unknown>; plan: ForwardPlan } {
  const raw = Buffer.from(JSON.stringify(body));
  const plan = planRequest({ routeType, provider, body: raw, context: ctx });
  assert.equal(plan.kind, 'forward');
  return { raw, sent: JSON.parse(Buffer.from(plan.upstream.body).toString()) as Record<string, unknown>, plan };
}

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
const responses = { model: 'gpt-4o', input: 'hi' };
const messages = { model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };

describe('providerA.moderation: the inline moderation parameter', () => {
  const rows: readonly { name: string; moderation: unknown; route: RouteType; body: Record<string, unknown>; expect: unknown }[] = [
    { name: 'model defaults to omni-moderation-latest, no policy', moderation: {}, route: 'Completions', body: chat, expect: { model: 'omni-moderation-latest' } },
    { name: 'Block on input, Score on output (chat)', moderation: { policy: { input: { mode: 'Block' }, output: { mode: 'Score' } } }, route: 'Completions', body: chat, expect: { model: 'omni-moderation-latest', policy: { input: { mode: 'block' }, output: { mode: 'score' } } } },
    { name: 'only output, a chosen model (Responses)', moderation: { model: 'text-moderation-latest', policy: { output: { mode: 'Block' } } }, route: 'Responses', body: responses, expect: { model: 'text-moderation-latest', policy: { output: { mode: 'block' } } } },
    { name: 'a Messages client translated to chat carries it too', moderation: { policy: { input: { mode: 'Score' } } }, route: 'Messages', body: messages, expect: { model: 'omni-moderation-latest', policy: { input: { mode: 'score' } } } },
    { name: "the operator's setting replaces the client's", moderation: { policy: { input: { mode: 'Block' } } }, route: 'Completions', body: { ...chat, moderation: { model: 'x', policy: { input: { mode: 'score' } } } }, expect: { model: 'omni-moderation-latest', policy: { input: { mode: 'block' } } } },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const { sent } = upstreamBody({ providerA: { moderation: row.moderation as never } }, row.route, row.body);
      assert.deepEqual(sent.moderation, row.expect);
    });
  }

  it('unset: not injected, and the client bytes go upstream unchanged', () => {
    const { raw, sent, plan } = upstreamBody({ providerA: {} }, 'Completions', chat);
    assert.equal(sent.moderation, undefined);
    assert.equal(plan.upstream.body, raw);
  });

  it('not injected where the API has no such parameter (embeddings)', () => {
    const { sent } = upstreamBody({ providerA: { moderation: { policy: { input: { mode: 'Block' } } } } }, 'Embeddings', { model: 'text-embedding-3-small', input: 'hi' });
    assert.equal(sent.moderation, undefined);
  });
});
