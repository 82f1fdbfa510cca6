/**
 * Reasoning artifacts must survive a full turn: provider answer → client format → the client
 * sends it back as history → the same provider receives its signature where it expects it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deterministicContext } from './context.ts';
import { FOREIGN_CALL_SIGNATURE } from './convert/gemini/request.ts';
import { planRequest } from './plan.ts';
import { CLIENT_ROUTES, clientRequest, type ClientRoute } from './testing/client-requests.ts';
import { loadFixtures, loadProviders, type UpstreamFixture } from './testing/fixtures.ts';

const providers = loadProviders();
const fixtures = new Map(loadFixtures<UpstreamFixture>('responses').map((f) => [f.name, f.data]));

type Json = Record<string, unknown>;

/** The client's next request: the first one, plus the assistant's answer and a result for each tool call. */
function nextTurn(route: ClientRoute, answer: Json): Json {
  const first = clientRequest(route, false);
  if (route === 'Completions') {
    const msg = (answer.choices as { message: Json & { tool_calls?: { id: string }[] } }[])[0].message;
    const results = (msg.tool_calls ?? []).map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'sunny' }));
    return { ...first, messages: [...(first.messages as Json[]), msg, ...results] };
  }
  if (route === 'Messages') {
    const content = answer.content as (Json & { type: string; id?: string })[];
    const results = content.filter((b) => b.type === 'tool_use').map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: 'sunny' }));
    return { ...first, messages: [...(first.messages as Json[]), { role: 'assistant', content }, { role: 'user', content: results }] };
  }
  const output = answer.output as (Json & { type: string; call_id?: string })[];
  const results = output.filter((i) => i.type === 'function_call').map((i) => ({ type: 'function_call_output', call_id: i.call_id, output: 'sunny' }));
  return { ...first, input: [{ role: 'user', content: first.input }, ...output, ...results] };
}

/** Where each upstream format keeps the signature in the assistant turn it receives back. */
const SIGNATURE_AT: Record<string, { fixture: string; signature: string; find: (body: Json) => unknown }> = {
  anthropic: {
    fixture: 'anthropic-thinking-tool', signature: 'EuYBCkQYAiJAsig==',
    find: (b) => (b.messages as { role: string; content: { type: string; signature?: string }[] }[])
      .filter((m) => m.role === 'assistant').flatMap((m) => m.content).find((c) => c.type === 'thinking')?.signature,
  },
  gemini: {
    fixture: 'gemini-thought-signature', signature: 'CiQB0e2Kb7sig==',
    // The signature must sit on the functionCall part it came with.
    find: (b) => (b.contents as { role: string; parts: { functionCall?: unknown; thoughtSignature?: string }[] }[])
      .filter((c) => c.role === 'model').flatMap((c) => c.parts).find((p) => p.functionCall)?.thoughtSignature,
  },
  bedrock: {
    fixture: 'bedrock-reasoning-tool', signature: 'sigBedrock==',
    find: (b) => (b.messages as { role: string; content: { reasoningContent?: { reasoningText?: { signature?: string } } }[] }[])
      .filter((m) => m.role === 'assistant').flatMap((m) => m.content).find((c) => c.reasoningContent)?.reasoningContent?.reasoningText?.signature,
  },
};

describe('reasoning signatures round-trip through every client format', () => {
  for (const [provider, spec] of Object.entries(SIGNATURE_AT)) {
    for (const route of CLIENT_ROUTES) {
      it(`${provider} via ${route}`, () => {
        const ctx = deterministicContext();
        const first = planRequest({ routeType: route, provider: providers[provider], body: Buffer.from(JSON.stringify(clientRequest(route, false))), context: ctx });
        assert.equal(first.kind, 'forward');
        const up = fixtures.get(spec.fixture)!.upstream;
        const answer = JSON.parse(Buffer.from(first.translateResponse(200, {}, Buffer.from(JSON.stringify(up.body))).body).toString()) as Json;
        const second = planRequest({ routeType: route, provider: providers[provider], body: Buffer.from(JSON.stringify(nextTurn(route, answer))), context: ctx });
        assert.equal(second.kind, 'forward');
        const upstreamBody = JSON.parse(Buffer.from(second.upstream.body).toString()) as Json;
        assert.equal(spec.find(upstreamBody), spec.signature);
      });
    }
  }
});

/**
 * Cross-vendor replay: the answer of one provider, sent back as history to another. A signature
 * reaches the second provider only when both belong to one family (Anthropic and Bedrock Claude
 * do); otherwise the signed reasoning is left out, which that provider accepts, where the foreign
 * signature would have failed the whole request. Gemini then gets its documented placeholder on
 * the function call the dropped reasoning preceded.
 */
const PRODUCERS: Record<string, { fixture: string; signature: string; family: string }> = {
  anthropic: { fixture: 'anthropic-thinking-tool', signature: 'EuYBCkQYAiJAsig==', family: 'anthropic' },
  bedrock: { fixture: 'bedrock-reasoning-tool', signature: 'sigBedrock==', family: 'anthropic' },
  gemini: { fixture: 'gemini-thought-signature', signature: 'CiQB0e2Kb7sig==', family: 'gemini' },
  'custom-responses': { fixture: 'responses-upstream-tool', signature: 'gAAAAencrypted', family: 'openai' },
};
const TARGETS: Record<string, { family: string; find: (body: Json) => unknown }> = {
  anthropic: { family: 'anthropic', find: SIGNATURE_AT.anthropic.find },
  'vertex-claude': { family: 'anthropic', find: SIGNATURE_AT.anthropic.find },
  bedrock: { family: 'anthropic', find: SIGNATURE_AT.bedrock.find },
  gemini: { family: 'gemini', find: SIGNATURE_AT.gemini.find },
  'vertex-gemini': { family: 'gemini', find: SIGNATURE_AT.gemini.find },
};

describe('reasoning signatures across vendors: replayed to their own family only', () => {
  for (const [producer, p] of Object.entries(PRODUCERS)) {
    for (const [target, t] of Object.entries(TARGETS)) {
      for (const route of CLIENT_ROUTES) {
        // Messages to Anthropic or Vertex Claude is a native route: the history is only rewritten when it holds a marked signature.
        const native = route === 'Messages' && (target === 'anthropic' || target === 'vertex-claude') ? ' (native route)' : '';
        const outcome = (p.family === t.family ? 'signature unwrapped and forwarded' : 'foreign signature dropped') + native;
        it(`${producer} → ${route} client → ${target}: ${outcome}`, () => {
          const ctx = deterministicContext();
          const first = planRequest({ routeType: route, provider: providers[producer], body: Buffer.from(JSON.stringify(clientRequest(route, false))), context: ctx });
          assert.equal(first.kind, 'forward');
          const up = fixtures.get(p.fixture)!.upstream;
          const answer = JSON.parse(Buffer.from(first.translateResponse(200, {}, Buffer.from(JSON.stringify(up.body))).body).toString()) as Json;
          const turn = nextTurn(route, answer);
          const second = planRequest({ routeType: route, provider: providers[target], body: Buffer.from(JSON.stringify(turn)), context: ctx });
          assert.equal(second.kind, 'forward');
          const body = JSON.parse(Buffer.from(second.upstream.body).toString()) as Json;
          if (p.family === t.family) {
            assert.equal(t.find(body), p.signature);
          } else if (t.family === 'gemini') {
            assert.equal(t.find(body), FOREIGN_CALL_SIGNATURE);
          } else {
            assert.equal(t.find(body), undefined);
          }
          // No trace of the foreign signature, marked or not, anywhere in what the target receives.
          if (p.family !== t.family) assert.ok(!JSON.stringify(body).includes(p.signature), 'foreign signature leaked upstream');
        });
      }
    }
  }
});
