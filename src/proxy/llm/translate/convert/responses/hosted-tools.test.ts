import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deterministicContext } from '../../context.ts';
import { planRequest } from '../../plan.ts';
import { bodyValue, loadProviders } from '../../testing/fixtures.ts';

const providers = loadProviders();

/** Plans a Responses request for a provider: the upstream body, or the gateway's own answer. */
function plan(provider: string, body: Record<string, unknown>): { status?: number; error?: { message: string; param: string | null }; upstream?: Record<string, unknown> } {
  const p = planRequest({ routeType: 'Responses', provider: providers[provider], body: Buffer.from(JSON.stringify({ model: 'm', input: 'hi', ...body })), context: deterministicContext() });
  if (p.kind === 'respond') return { status: p.response.status, error: (bodyValue(p.response.body) as { error: { message: string; param: string | null } }).error };
  return { upstream: bodyValue(p.upstream.body) as Record<string, unknown> };
}

const TRANSLATED = ['anthropic', 'vertex-claude', 'foundry-claude', 'gemini', 'vertex-gemini', 'bedrock', 'custom'];

describe('Responses hosted tools on translated routes', () => {
  const refused: { name: string; tool: Record<string, unknown> }[] = [
    { name: 'file_search', tool: { type: 'file_search', vector_store_ids: ['vs_1'] } },
    { name: 'code_interpreter', tool: { type: 'code_interpreter', container: { type: 'auto' } } },
    { name: 'computer_use_preview', tool: { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' } },
    { name: 'image_generation', tool: { type: 'image_generation' } },
    { name: 'mcp', tool: { type: 'mcp', server_label: 'deepwiki', server_url: 'https://mcp.deepwiki.com/mcp', require_approval: 'never' } },
    { name: 'local_shell', tool: { type: 'local_shell' } },
  ];
  for (const c of refused) {
    for (const provider of TRANSLATED) {
      it(`${c.name} → 400 naming the tool type (${provider})`, () => {
        const r = plan(provider, { tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }, c.tool] });
        assert.equal(r.status, 400);
        assert.equal(r.error?.param, 'tools');
        assert.match(r.error?.message ?? '', new RegExp(`tool type "${c.name}"`));
      });
    }
    it(`${c.name} goes as sent to a provider that speaks Responses (openai)`, () => {
      assert.deepEqual(plan('openai', { tools: [c.tool] }).upstream?.tools, [c.tool]);
    });
  }

  const searches: { name: string; tool: Record<string, unknown>; anthropic: Record<string, unknown> }[] = [
    { name: 'web_search', tool: { type: 'web_search' }, anthropic: { type: 'web_search_20250305', name: 'web_search' } },
    { name: 'web_search_preview', tool: { type: 'web_search_preview', search_context_size: 'low' }, anthropic: { type: 'web_search_20250305', name: 'web_search' } },
    { name: 'web_search_2025_08_26', tool: { type: 'web_search_2025_08_26' }, anthropic: { type: 'web_search_20250305', name: 'web_search' } },
    { name: 'web_search_preview_2025_03_11', tool: { type: 'web_search_preview_2025_03_11' }, anthropic: { type: 'web_search_20250305', name: 'web_search' } },
    {
      name: 'web_search with domains and location',
      tool: { type: 'web_search', filters: { allowed_domains: ['example.com'] }, user_location: { type: 'approximate', city: 'Oslo', country: 'NO', region: null } },
      anthropic: { type: 'web_search_20250305', name: 'web_search', allowed_domains: ['example.com'], user_location: { type: 'approximate', city: 'Oslo', country: 'NO' } },
    },
  ];
  for (const c of searches) {
    it(`${c.name} → Anthropic's web_search server tool`, () => {
      for (const provider of ['anthropic', 'vertex-claude', 'foundry-claude']) assert.deepEqual(plan(provider, { tools: [c.tool] }).upstream?.tools, [c.anthropic], provider);
    });
    it(`${c.name} → Gemini googleSearch, or 400 when a domain filter cannot be kept`, () => {
      for (const provider of ['gemini', 'vertex-gemini']) {
        const r = plan(provider, { tools: [c.tool] });
        if (c.anthropic.allowed_domains) assert.equal(r.status, 400, provider);
        else assert.deepEqual(r.upstream?.tools, [{ googleSearch: {} }], provider);
      }
    });
    it(`${c.name} → 400 where the provider has no search (Bedrock Converse, chat upstreams)`, () => {
      for (const provider of ['bedrock', 'custom']) {
        const r = plan(provider, { tools: [c.tool] });
        assert.equal(r.status, 400, provider);
        assert.match(r.error?.message ?? '', /tool type "web_search" has no equivalent/);
      }
    });
  }

  const choices: { name: string; provider: string; body: Record<string, unknown>; expect: { status?: number; tools?: unknown[]; toolChoice?: unknown; functionConfig?: unknown } }[] = [
    { name: 'required with only web search forces the search (Anthropic any)', provider: 'anthropic', body: { tools: [{ type: 'web_search' }], tool_choice: 'required' }, expect: { tools: [{ type: 'web_search_20250305', name: 'web_search' }], toolChoice: { type: 'any' } } },
    { name: 'required beside a function tool stays as written (Anthropic)', provider: 'anthropic', body: { tools: [{ type: 'web_search' }, { type: 'function', name: 'f', parameters: { type: 'object' } }], tool_choice: 'required' }, expect: { toolChoice: { type: 'any' } } },
    { name: 'none keeps Anthropic from any tool, the server tool included', provider: 'anthropic', body: { tools: [{ type: 'web_search' }], tool_choice: 'none' }, expect: { tools: [{ type: 'web_search_20250305', name: 'web_search' }], toolChoice: { type: 'none' } } },
    { name: 'required with only web search cannot be forced on Gemini (400)', provider: 'gemini', body: { tools: [{ type: 'web_search' }], tool_choice: 'required' }, expect: { status: 400 } },
    { name: 'none leaves Google Search out on Gemini', provider: 'gemini', body: { tools: [{ type: 'web_search' }], tool_choice: 'none' }, expect: { tools: undefined, functionConfig: { mode: 'NONE' } } },
  ];
  for (const c of choices) {
    it(`tool_choice: ${c.name}`, () => {
      const r = plan(c.provider, c.body);
      if (c.expect.status) return assert.equal(r.status, c.expect.status);
      if ('tools' in c.expect) assert.deepEqual(r.upstream?.tools, c.expect.tools);
      if (c.expect.toolChoice) assert.deepEqual(r.upstream?.tool_choice, c.expect.toolChoice);
      if (c.expect.functionConfig) assert.deepEqual((r.upstream?.toolConfig as { functionCallingConfig: unknown }).functionCallingConfig, c.expect.functionConfig);
    });
  }

  it('a hosted tool forced by tool_choice → 400 naming tool_choice', () => {
    const r = plan('anthropic', { tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search_preview' } });
    assert.equal(r.status, 400);
    assert.equal(r.error?.param, 'tool_choice');
  });

  it('a web_search_call item in the input (a search that already ran) is not replayed', () => {
    const r = plan('anthropic', {
      input: [
        { role: 'user', content: 'News?' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'news' } },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Here is the news.' }] },
        { role: 'user', content: 'More?' },
      ],
    });
    assert.deepEqual((r.upstream?.messages as { role: string }[]).map((m) => m.role), ['user', 'assistant', 'user']);
  });
});

describe('Responses stored state on translated routes', () => {
  const cases: { name: string; body: Record<string, unknown>; param: string }[] = [
    { name: 'previous_response_id', body: { previous_response_id: 'resp_123' }, param: 'previous_response_id' },
    { name: 'conversation as an id', body: { conversation: 'conv_123' }, param: 'conversation' },
    { name: 'conversation as an object', body: { conversation: { id: 'conv_123' } }, param: 'conversation' },
  ];
  for (const c of cases) {
    for (const provider of TRANSLATED) {
      it(`${c.name} → 400 naming ${c.param} (${provider})`, () => {
        const r = plan(provider, c.body);
        assert.equal(r.status, 400);
        assert.equal(r.error?.param, c.param);
      });
    }
    it(`${c.name} goes as sent to a provider that speaks Responses (openai)`, () => {
      assert.deepEqual(plan('openai', c.body).upstream?.[c.param], c.body[c.param]);
    });
  }
});
