/**
 * The stream encoders serialise a stream's constant fields once and append each event's varying
 * part (chat.ts, messages.ts, responses.ts). What that must not change: every event is the bytes
 * JSON.stringify gives for its object (same key order, same escaping), and the fields OpenAI keeps
 * for a whole stream (chat `id`/`created`/`model`, the Responses response's `id`/`created_at`/`model`)
 * are the same on every event — even with a clock that moves between calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Request, StreamEvent } from '../../canonical.ts';
import { clientEncoder, type ClientFormat } from '../../codecs.ts';
import { deterministicContext, type TranslationContext } from '../../context.ts';
import { planRequest } from '../../plan.ts';
import { CLIENT_ROUTES, clientRequest, type ClientRoute } from '../../testing/client-requests.ts';
import { feed, loadFixtures, loadProviders, upstreamStreamBytes, type UpstreamFixture } from '../../testing/fixtures.ts';
import type { Usage } from '../../usage.ts';
import { SSEParser, type SSEEvent } from '../sse.ts';

type Ev = Exclude<StreamEvent, { type: 'usage' }>;

const T0 = 1700000000;

/** Deterministic ids and a clock one second later at every call (a stream spans seconds). */
function tickingContext(): TranslationContext {
  const ids = deterministicContext();
  let t = T0;
  return { newId: (p) => ids.newId(p), now: () => t++ };
}

function events(sse: string): SSEEvent[] {
  const p = new SSEParser();
  return [...p.push(Buffer.from(sse)), ...p.end()];
}

/** Hand-built JSON must be exactly what JSON.stringify writes for the object it parses to. */
function assertCanonical(data: string, where: string): unknown {
  const value: unknown = JSON.parse(data);
  assert.equal(data, JSON.stringify(value), `${where}: not JSON.stringify's bytes`);
  return value;
}

// Strings JSON escapes (quote, backslash, control characters) or passes through (U+2028, emoji, markup).
const TRICKY = 'a "quote" \\ back\nline\ttab \u2028 \u0001 😀 </script>';

interface Row {
  readonly name: string;
  readonly events: readonly Ev[];
  readonly usage?: Usage;
}

const rows: Row[] = [
  { name: 'text only, upstream id and model', events: [{ type: 'start', id: 'msg_1', model: 'up-model' }, { type: 'text', text: 'Hel' }, { type: 'text', text: 'lo' }, { type: 'finish', reason: 'stop' }], usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } },
  { name: 'no start event: ids and model are the gateway\'s', events: [{ type: 'text', text: 'hi' }] },
  { name: 'strings that need escaping in id, model and text', events: [{ type: 'start', id: `msg_${TRICKY}`, model: TRICKY }, { type: 'text', text: TRICKY }, { type: 'text', text: '' }, { type: 'finish', reason: 'length' }] },
  {
    name: 'reasoning, a tool call and text after it',
    events: [
      { type: 'start', id: 'chatcmpl-abc' },
      { type: 'thinking', text: 'let me see' },
      { type: 'thinking_signature', signature: 'sig', family: 'anthropic' },
      { type: 'tool_call_start', key: 0, id: 'call_1', name: 'get.weather' },
      { type: 'tool_call_args', key: 0, delta: '{"city":' },
      { type: 'tool_call_args', key: 0, delta: `${JSON.stringify(TRICKY)}}` },
      { type: 'text', text: 'Sunny.' },
      { type: 'finish', reason: 'tool_calls' },
    ],
    usage: { inputTokens: 10, outputTokens: 7, totalTokens: 17, cachedInputTokens: 2 },
  },
  { name: 'web search and a citation', events: [{ type: 'text', text: 'See ' }, { type: 'web_search', id: 'ws_1', queries: ['q'] }, { type: 'text', text: 'this source.' }, { type: 'citation', citation: { url: 'https://example.com/', title: TRICKY, start: 0, end: 4 } }] },
  { name: 'an error mid-stream', events: [{ type: 'start', id: 'msg_e' }, { type: 'text', text: 'Part' }, { type: 'error', status: 529, errorType: 'overloaded_error', message: TRICKY }] },
];

const REQUEST: Request = { model: 'client-model', system: [], messages: [], stream: true };

function encode(format: ClientFormat, row: Row): string {
  const enc = clientEncoder(format, REQUEST, true, tickingContext());
  const out: string[] = [];
  let ended = false;
  for (const ev of row.events) {
    out.push(...enc.push(ev));
    if (ev.type === 'error') ended = true;
  }
  if (!ended) out.push(...enc.finish(row.usage));
  return out.join('');
}

describe('stream encoders: constant fields serialised once', () => {
  for (const row of rows) {
    describe(row.name, () => {
      it('chat: every chunk is canonical JSON and shares id, created and model', () => {
        const chunks = events(encode('chat', row)).filter((e) => e.data !== '[DONE]');
        assert.ok(chunks.length > 0);
        const parsed = chunks.map((e, i) => assertCanonical(e.data, `chunk ${i}`) as Record<string, unknown>);
        const data = parsed.filter((c) => c.object === 'chat.completion.chunk');
        assert.ok(data.length > 0);
        const [first] = data;
        for (const c of data) {
          assert.equal(c.id, first!.id);
          assert.equal(c.created, T0, 'created is the stream start for every chunk');
          assert.equal(c.model, first!.model);
        }
      });

      it('messages: every event is canonical JSON named by its type, deltas carry the open block', () => {
        let block = -1;
        for (const [i, e] of events(encode('messages', row)).entries()) {
          const v = assertCanonical(e.data, `event ${i}`) as { type: string; index?: number };
          assert.equal(e.event, v.type);
          if (v.type === 'content_block_start') block = v.index!;
          if (v.type === 'content_block_delta') assert.equal(v.index, block);
        }
      });

      it('responses: every event is canonical JSON, numbered in order; the response keeps id, created_at, model', () => {
        const seen = new Set<string>();
        let item: { id: string; index: number } | undefined;
        for (const [i, e] of events(encode('responses', row)).entries()) {
          const v = assertCanonical(e.data, `event ${i}`) as { type: string; sequence_number: number; response?: Record<string, unknown>; item?: { id: string }; item_id?: string; output_index?: number };
          assert.equal(e.event, v.type);
          assert.equal(v.sequence_number, i);
          if (v.response) seen.add(JSON.stringify([v.response.id, v.response.created_at, v.response.model]));
          if (v.type === 'response.output_item.added') item = { id: v.item!.id, index: v.output_index! };
          if (v.item_id !== undefined) assert.deepEqual({ id: v.item_id, index: v.output_index }, item);
        }
        assert.ok(seen.size <= 1, `one id/created_at/model across the stream, saw ${[...seen].join(' ')}`);
      });
    });
  }
});

describe('recorded streams under a moving clock: the same events as the fixtures', () => {
  const providers = loadProviders();
  for (const fx of loadFixtures<UpstreamFixture>('streams')) {
    for (const route of (fx.data.routes ?? CLIENT_ROUTES) as ClientRoute[]) {
      it(`${fx.name} → ${route}`, () => {
        const plan = planRequest({ routeType: route, provider: providers[fx.data.provider]!, body: Buffer.from(JSON.stringify(clientRequest(route, true))), context: tickingContext() });
        assert.equal(plan.kind, 'forward');
        const t = plan.createStreamTranslator();
        const got = events(feed((c) => t.push(c), () => t.end(), upstreamStreamBytes(fx.data.upstream), 0));
        const want = events((fx.data.expect?.[route] as { sse: string }).sse);
        const parse = (e: SSEEvent) => ({ event: e.event, data: e.data === '[DONE]' ? e.data : JSON.parse(e.data) as unknown });
        assert.deepEqual(got.map(parse), want.map(parse));
      });
    }
  }
});
