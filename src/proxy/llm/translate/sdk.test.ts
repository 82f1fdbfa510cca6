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
import type { SignatureFamily } from './canonical.ts';
import { markSignature } from './convert/signatures.ts';
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
interface Seen { text: string; tools: { name: string; args: unknown }[]; signatures: string[]; citations: string[]; searches?: string[] }

/** A url_citation as `url@start-end`, whatever the format's nesting. */
function citationKey(a: { url: string; start_index: number; end_index: number }): string {
  return `${a.url}@${a.start_index}-${a.end_index}`;
}

function fromChat(c: OpenAI.Chat.ChatCompletion): Seen {
  const m = c.choices[0].message as OpenAI.Chat.ChatCompletionMessage & { thinking_blocks?: { signature?: string }[] };
  return {
    text: m.content ?? '',
    tools: (m.tool_calls ?? []).map((t) => (t.type === 'function' ? { name: t.function.name, args: JSON.parse(t.function.arguments) as unknown } : { name: '', args: null })),
    signatures: (m.thinking_blocks ?? []).map((b) => b.signature ?? '').filter(Boolean),
    citations: (m.annotations ?? []).map((a) => citationKey(a.url_citation)),
  };
}

function fromMessage(m: Anthropic.Message): Seen {
  return {
    text: m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    tools: m.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, args: b.input }] : [])),
    signatures: m.content.flatMap((b) => (b.type === 'thinking' && b.signature ? [b.signature] : [])),
    citations: m.content.flatMap((b) => (b.type === 'text' ? (b.citations ?? []).map((c) => c.type) : [])),
  };
}

function fromResponse(r: OpenAI.Responses.Response): Seen {
  return {
    text: r.output_text,
    tools: r.output.flatMap((i) => (i.type === 'function_call' ? [{ name: i.name, args: JSON.parse(i.arguments) as unknown }] : [])),
    signatures: r.output.flatMap((i) => (i.type === 'reasoning' && i.encrypted_content ? [i.encrypted_content] : [])),
    citations: r.output.flatMap((i) => (i.type === 'message' ? i.content.flatMap((c) => (c.type === 'output_text' ? c.annotations.flatMap((a) => (a.type === 'url_citation' ? [citationKey(a)] : [])) : [])) : [])),
    searches: r.output.flatMap((i) => (i.type === 'web_search_call' && i.action.type === 'search' ? [i.action.query ?? ''] : [])),
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

/**
 * What each provider fixture should look like to any client. Identity Anthropic passthrough keeps
 * the upstream tool name. `text` may differ by route (runs joined with a separator in chat; one
 * block or message per run elsewhere); `signature` is the vendor's own, which clients of another
 * format receive with the family mark; `citations` are what chat and Responses clients see
 * (url@start-end in characters), `searches` the web_search_call queries of Responses clients.
 */
type Expected =
  | { text: string | Record<string, string>; tools: { name: string; args: unknown }[]; signature?: string; citations?: string[] | Record<string, string[]>; searches?: string[] }
  | { error: RegExp; status?: number };

/** Which signature family a fixture's provider signs with, and which family is each client format's own. */
function familyOf(provider: string): SignatureFamily {
  return provider === 'anthropic' || provider === 'bedrock' ? 'anthropic' : provider === 'gemini' ? 'gemini' : 'openai';
}
const NATIVE: Record<string, SignatureFamily | undefined> = { Completions: undefined, Messages: 'anthropic', Responses: 'openai' };
const ECB = 'https://www.ecb.europa.eu/press/pr/date/2026/html/ecb.mp261119.en.html';
const GROUNDED = 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE';
const GERMAN = 'Die EZB ließ die Leitzinsen unverändert 🏦; der Einlagesatz bleibt bei 2,00 % — Entscheidung vom 19. November.';

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
  // Hosted web search: identity Messages clients see Anthropic's own blocks and citations; chat
  // and Responses clients get url_citation annotations and (Responses) a web_search_call item.
  'responses/anthropic-web-search': {
    text: {
      Completions: "I'll look up this week's decision.\n\nThe ECB kept its three key interest rates unchanged; the deposit facility rate stays at 2.00%.",
      Messages: "I'll look up this week's decision.The ECB kept its three key interest rates unchanged; the deposit facility rate stays at 2.00%.",
      Responses: "I'll look up this week's decision.The ECB kept its three key interest rates unchanged; the deposit facility rate stays at 2.00%.",
    },
    tools: [], citations: { Completions: [`${ECB}@36-130`], Responses: [`${ECB}@0-94`] }, searches: ['ECB interest rate decision November 2026'],
  },
  'responses/gemini-google-search': {
    text: 'The ECB left its key rates unchanged on 19 November; the deposit facility rate stays at 2.00%.', tools: [],
    citations: ['https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQHk2@0-51'], searches: ['ECB interest rate decision November 2026'],
  },
  'responses/gemini-grounding-unicode': {
    text: GERMAN, tools: [], citations: [`${GROUNDED}1@0-41`, `${GROUNDED}1@43-76`, `${GROUNDED}2@43-76`], searches: ['EZB Zinsentscheidung November 2026'],
  },
  'streams/anthropic-web-search': {
    text: { Completions: "I'll look it up.\n\nRates are unchanged; the deposit rate stays at 2.00%.", Messages: "I'll look it up.Rates are unchanged; the deposit rate stays at 2.00%.", Responses: "I'll look it up.Rates are unchanged; the deposit rate stays at 2.00%." },
    tools: [], citations: { Completions: [`${ECB}@18-71`], Responses: [`${ECB}@0-53`] }, searches: ['ECB rate decision'],
  },
  'streams/gemini-grounding-unicode': {
    text: GERMAN, tools: [], citations: [`${GROUNDED}1@0-41`, `${GROUNDED}1@43-76`, `${GROUNDED}2@43-76`], searches: ['EZB Zinsentscheidung November 2026'],
  },
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
          assert.equal(seen.text, typeof expected.text === 'string' ? expected.text : expected.text[route]);
          assert.deepEqual(seen.tools, expected.tools.map((t) => ({ ...t, name: passthrough ? t.name.replace('.', '_') : t.name })));
          // Streamed chat has no standard place for signatures (the SDK keeps only the last delta field).
          if (expected.signature && !(route === 'Completions' && dir === 'streams')) {
            const marked = markSignature(expected.signature, familyOf(fx.data.provider), NATIVE[route]);
            assert.ok(seen.signatures.includes(marked), `signature ${marked} missing: ${JSON.stringify(seen.signatures)}`);
          }
          // The chat SDK's stream helper drops delta annotations; the raw chunks carry them (translate.test.ts).
          if (expected.citations && route !== 'Messages' && !(route === 'Completions' && dir === 'streams')) {
            assert.deepEqual(seen.citations, Array.isArray(expected.citations) ? expected.citations : expected.citations[route]);
          }
          if (expected.searches && route === 'Responses') assert.deepEqual(seen.searches, expected.searches);
          // Messages clients: Anthropic's own citations on the identity route, plain text through other providers.
          if (expected.citations && route === 'Messages') assert.equal(seen.citations.length > 0, fx.data.provider === 'anthropic');
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
