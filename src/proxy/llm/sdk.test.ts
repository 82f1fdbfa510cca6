/**
 * The official SDKs parse every translated answer. A tiny loopback server plays the gateway:
 * it plans the SDK's request with `planRequest`, answers it with a recorded-shape provider
 * fixture (streams pushed in 7-byte pieces) and writes what the translators produce.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { RouteType } from './config.ts';
import { planRequest } from './plan.ts';
import { loadFixtures, loadProviders, upstreamStreamBytes, type UpstreamFixture } from './testing/fixtures.ts';

interface Scenario { provider: string; upstream: UpstreamFixture['upstream'] }

const providers = loadProviders();
let scenario: Scenario;
let server: Server;
let baseURL: string;

function routeOf(path: string): RouteType {
  if (path.endsWith('/chat/completions')) return 'Completions';
  if (path.endsWith('/messages/count_tokens')) return 'TokenCount';
  if (path.endsWith('/messages')) return 'Messages';
  if (path.endsWith('/responses')) return 'Responses';
  if (path.endsWith('/models')) return 'Models';
  return 'Passthrough';
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const path = (req.url ?? '/').split('?')[0];
  const plan = planRequest({
    routeType: routeOf(path), provider: providers[scenario.provider], body: Buffer.concat(chunks), path,
    headers: { 'anthropic-version': req.headers['anthropic-version'] as string | undefined },
  });
  if (plan.kind === 'respond') {
    res.writeHead(plan.response.status, plan.response.headers).end(plan.response.body);
    return;
  }
  const up = scenario.upstream;
  if (plan.stream && (up.sse !== undefined || up.eventstream)) {
    const t = plan.createStreamTranslator();
    res.writeHead(200, plan.streamHeaders);
    const bytes = upstreamStreamBytes(up);
    for (let i = 0; i < bytes.length; i += 7) for (const out of t.push(bytes.subarray(i, i + 7))) res.write(out);
    for (const out of t.end()) res.write(out);
    res.end();
    return;
  }
  const r = plan.translateResponse(up.status ?? 200, up.headers ?? {}, Buffer.from(JSON.stringify(up.body)));
  res.writeHead(r.status, r.headers).end(r.body);
}

before(async () => {
  server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => res.writeHead(500).end(String(e)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const openai = () => new OpenAI({ apiKey: 'test', baseURL: `${baseURL}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: 'test', baseURL, maxRetries: 0 });

const weatherSchema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
const question = 'What is the weather?';

/** What a client saw, reduced to what every format can express. */
interface Seen { text: string; tools: { name: string; args: unknown }[]; signatures: string[] }

function fromChat(c: OpenAI.Chat.ChatCompletion): Seen {
  const m = c.choices[0].message as OpenAI.Chat.ChatCompletionMessage & { thinking_blocks?: { signature?: string }[] };
  return {
    text: m.content ?? '',
    tools: (m.tool_calls ?? []).map((t) => (t.type === 'function' ? { name: t.function.name, args: JSON.parse(t.function.arguments) as unknown } : { name: '', args: null })),
    signatures: (m.thinking_blocks ?? []).map((b) => b.signature ?? '').filter(Boolean),
  };
}

function fromMessage(m: Anthropic.Message): Seen {
  return {
    text: m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    tools: m.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, args: b.input }] : [])),
    signatures: m.content.flatMap((b) => (b.type === 'thinking' && b.signature ? [b.signature] : [])),
  };
}

function fromResponse(r: OpenAI.Responses.Response): Seen {
  return {
    text: r.output_text,
    tools: r.output.flatMap((i) => (i.type === 'function_call' ? [{ name: i.name, args: JSON.parse(i.arguments) as unknown }] : [])),
    signatures: r.output.flatMap((i) => (i.type === 'reasoning' && i.encrypted_content ? [i.encrypted_content] : [])),
  };
}

async function ask(route: 'Completions' | 'Messages' | 'Responses', stream: boolean): Promise<Seen> {
  if (route === 'Completions') {
    const params = { model: 'client-model', messages: [{ role: 'user' as const, content: question }], tools: [{ type: 'function' as const, function: { name: 'get.weather', parameters: weatherSchema } }] };
    return fromChat(stream ? await openai().chat.completions.stream(params).finalChatCompletion() : await openai().chat.completions.create(params));
  }
  if (route === 'Messages') {
    const params = { model: 'client-model', max_tokens: 1024, messages: [{ role: 'user' as const, content: question }], tools: [{ name: 'get.weather', input_schema: weatherSchema }] };
    return fromMessage(stream ? await anthropic().messages.stream(params).finalMessage() : await anthropic().messages.create(params));
  }
  const params = { model: 'client-model', input: question, tools: [{ type: 'function' as const, name: 'get.weather', parameters: weatherSchema, strict: false }] };
  return fromResponse(stream ? await openai().responses.stream(params).finalResponse() : await openai().responses.create(params));
}

/** What each provider fixture should look like to any client. Identity Anthropic passthrough keeps the upstream tool name. */
type Expected = { text: string; tools: { name: string; args: unknown }[]; signature?: string } | { error: RegExp; status?: number };
const EXPECTED: Record<string, Expected> = {
  'responses/openai-tool-calls': { text: '', tools: [{ name: 'get.weather', args: { city: 'Paris' } }, { name: 'get.weather', args: { city: 'Rome' } }] },
  'responses/openai-length': { text: 'Once upon a', tools: [] },
  'responses/anthropic-thinking-tool': { text: 'Checking.', tools: [{ name: 'get.weather', args: { city: 'Oslo' } }], signature: 'EuYBCkQYAiJAsig==' },
  'responses/gemini-thought-signature': { text: '', tools: [{ name: 'get.weather', args: { city: 'Tokyo' } }], signature: 'CiQB0e2Kb7sig==' },
  'responses/bedrock-reasoning-tool': { text: 'One moment.', tools: [{ name: 'get.weather', args: { city: 'Lima' } }], signature: 'sigBedrock==' },
  'responses/responses-upstream-tool': { text: '', tools: [{ name: 'get.weather', args: { city: 'Nairobi' } }], signature: 'gAAAAencrypted' },
  'responses/anthropic-error-overloaded': { error: /Overloaded/, status: 529 },
  'responses/bedrock-error-validation': { error: /max_tokens: Field required/, status: 400 },
  'responses/gemini-error-quota': { error: /Resource has been exhausted/, status: 429 },
  'streams/openai-text-usage': { text: 'Héllo wörld ✓', tools: [] },
  'streams/openai-responses-passthrough': { text: 'Sunny.', tools: [] },
  'streams/openai-tool-calls': { text: '', tools: [{ name: 'get.weather', args: { city: 'Paris' } }, { name: 'get.weather', args: { city: 'Rome' } }] },
  'streams/anthropic-thinking-tool': { text: 'Checking Oslo.', tools: [{ name: 'get.weather', args: { city: 'Oslo' } }], signature: 'EqQBsig==' },
  'streams/anthropic-error-midstream': { error: /Overloaded/ },
  'streams/anthropic-truncated': { error: /ended before the response was complete/ },
  'streams/gemini-thought-tools': { text: 'Let me look that up.', tools: [{ name: 'get.weather', args: { city: 'Tokyo' } }], signature: 'CiQBsigGem==' },
  'streams/bedrock-reasoning-tool': { text: 'On it.', tools: [{ name: 'get.weather', args: { city: 'Lima' } }], signature: 'sigBR==' },
  'streams/responses-upstream-tool': { text: 'Looking it up.', tools: [{ name: 'get.weather', args: { city: 'Nairobi' } }], signature: 'gAAAAstream' },
  'streams/bedrock-throttled': { error: /Too many requests/ },
  // Hosted web search: the server tool blocks stay with Anthropic (identity Messages clients see them); the answer is text.
  'responses/anthropic-web-search': { text: "I'll look up this week's decision.The ECB kept its three key interest rates unchanged; the deposit facility rate stays at 2.00%.", tools: [] },
  'responses/gemini-google-search': { text: 'The ECB left its key rates unchanged on 19 November; the deposit facility rate stays at 2.00%.', tools: [] },
  'streams/anthropic-web-search': { text: "I'll look it up.Rates are unchanged; the deposit rate stays at 2.00%.", tools: [] },
};

for (const dir of ['responses', 'streams'] as const) {
  describe(`official SDKs parse translated ${dir}`, () => {
    for (const fx of loadFixtures<UpstreamFixture>(dir)) {
      const expected = EXPECTED[`${dir}/${fx.name}`];
      for (const route of fx.data.routes ?? (['Completions', 'Messages', 'Responses'] as const)) {
        it(`${fx.name} → ${route}`, async () => {
          assert.ok(expected, `no SDK expectation for ${dir}/${fx.name}`);
          scenario = { provider: fx.data.provider, upstream: fx.data.upstream };
          const attempt = ask(route, dir === 'streams');
          if ('error' in expected) {
            await assert.rejects(attempt, (e: Error & { status?: number }) => {
              assert.match(e.message, expected.error);
              if (expected.status) assert.equal(e.status, expected.status);
              return true;
            });
            return;
          }
          const seen = await attempt;
          // Anthropic → Anthropic is passthrough: the client sees the upstream's own tool name.
          const passthrough = route === 'Messages' && fx.data.provider === 'anthropic';
          assert.equal(seen.text, expected.text);
          assert.deepEqual(seen.tools, expected.tools.map((t) => ({ ...t, name: passthrough ? t.name.replace('.', '_') : t.name })));
          // Streamed chat has no standard place for signatures (the SDK keeps only the last delta field).
          if (expected.signature && !(route === 'Completions' && dir === 'streams')) assert.ok(seen.signatures.includes(expected.signature), `signature missing: ${JSON.stringify(seen.signatures)}`);
        });
      }
    }
  });
}

describe('official SDKs: gateway-made answers', () => {
  it('Anthropic count_tokens answered locally for an OpenAI provider', async () => {
    scenario = { provider: 'openai', upstream: {} };
    const r = await anthropic().messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    assert.ok(r.input_tokens > 5 && r.input_tokens < 30, `estimate ${r.input_tokens}`);
  });

  it('models list in both shapes', async () => {
    scenario = { provider: 'anthropic', upstream: {} };
    const oa = await openai().models.list();
    assert.deepEqual(oa.data.map((m) => m.id), ['claude-sonnet-4-5']);
    const an = await anthropic().models.list();
    assert.deepEqual(an.data.map((m) => m.id), ['claude-sonnet-4-5']);
  });

  it('a request the provider cannot express fails in the client format', async () => {
    scenario = { provider: 'bedrock', upstream: {} };
    await assert.rejects(
      openai().chat.completions.create({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] }] }),
      (e: Error & { status?: number }) => e.status === 400 && /base64/.test(e.message),
    );
  });
});
