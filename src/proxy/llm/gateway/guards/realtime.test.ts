import { test } from 'node:test';
import assert from 'node:assert/strict';
import './kinds.ts';
import { compilePromptGuard } from './compile.ts';
import { MAX_HELD_CHARS, RealtimeGuard, type RealtimeVerdict } from './realtime.ts';
import { REMOTE_CHECK_CHARS } from './stream.ts';
import type { CompiledGuard } from './types.ts';
import { Registry } from 'prom-client';
import { registerAiMetrics } from '../../../telemetry/ai-metrics.ts';

const guard = compilePromptGuard({
  streaming: 'Enabled',
  request: [{ regex: { builtins: ['Email'] } }, { regex: { builtins: ['Ssn'], action: 'Reject' } }],
  response: [{ regex: { builtins: ['Ssn'], action: 'Reject' }, response: { message: 'no' } }],
});
assert.ok(guard);
const rt = () => new RealtimeGuard(guard, { headers: {}, signal: new AbortController().signal });
const sync = (v: RealtimeVerdict | Promise<RealtimeVerdict>): RealtimeVerdict => {
  assert.ok(!(v instanceof Promise), 'regex guards answer synchronously');
  return v;
};

/** Client events: where their text is, masked in place (or rejected); events without text pass as they are. */
const CLIENT: Record<string, { event: Record<string, unknown>; want: RealtimeVerdict['kind']; sent?: RegExp }> = {
  'session.update instructions are masked': { event: { type: 'session.update', session: { instructions: 'cc a@b.io' } }, want: 'send', sent: /"instructions":"cc <EMAIL>"/ },
  'response.create instructions are judged': { event: { type: 'response.create', response: { instructions: 'ssn 123-45-6789' } }, want: 'reject' },
  'a user input_text part is judged': { event: { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '123-45-6789' }] } }, want: 'reject' },
  'a function call output is judged': { event: { type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'c', output: 'mail x@y.org' } }, want: 'send', sent: /"output":"mail <EMAIL>"/ },
  'audio is not text': { event: { type: 'input_audio_buffer.append', audio: '123-45-6789' }, want: 'send', sent: /"audio":"123-45-6789"/ },
};

for (const [name, row] of Object.entries(CLIENT)) {
  test(`RealtimeGuard.fromClient: ${name}`, () => {
    const v = sync(rt().fromClient(JSON.stringify(row.event)));
    assert.equal(v.kind, row.want);
    if (v.kind === 'send' && row.sent) assert.match(v.texts.join(), row.sent);
  });
}

test('RealtimeGuard.fromProvider: deltas accumulate per item; a rejection is an OpenAI Realtime error event', () => {
  const g = rt();
  const delta = (item: string, text: string) => JSON.stringify({ type: 'response.output_text.delta', item_id: item, delta: text });
  assert.equal(sync(g.fromProvider(delta('a', 'ssn 123-45'))).kind, 'send');
  assert.equal(sync(g.fromProvider(delta('b', '-6789'))).kind, 'send', 'another item has its own text');
  const v = sync(g.fromProvider(delta('a', '-6789')));
  assert.equal(v.kind, 'reject');
  assert.deepEqual(v.kind === 'reject' && JSON.parse(v.event), { type: 'error', event_id: 'event_guard_rejected', error: { type: 'invalid_request_error', code: 'guard_rejected', message: 'no', param: null } });
});

test('RealtimeGuard.applies: only with streaming: Enabled and some guard', () => {
  assert.equal(RealtimeGuard.applies(guard), true);
  assert.equal(RealtimeGuard.applies(compilePromptGuard({ request: [{ regex: { builtins: ['Ssn'] } }] })), false);
  assert.equal(RealtimeGuard.applies(undefined), false);
});

/** A guard kind that calls a service (answers later), recording the texts it was given. */
function remote(seen: string[][], reject?: string): CompiledGuard {
  return {
    kind: 'webhook', rejectStatus: 403, rejectMessage: 'no', failOpen: false,
    check: (input) => {
      seen.push(input.segments.map((s) => s.text));
      return Promise.resolve({ action: reject !== undefined && input.segments.some((s) => s.text.includes(reject)) ? 'reject' : 'pass' });
    },
  };
}
const remoteRt = (g: CompiledGuard) => new RealtimeGuard({ streaming: true, request: [], response: [g] }, { headers: {}, signal: new AbortController().signal });
const delta = (item: string, text: string) => JSON.stringify({ type: 'response.output_text.delta', item_id: item, delta: text });
const sent = async (v: RealtimeVerdict | Promise<RealtimeVerdict>): Promise<readonly string[]> => {
  const r = await v;
  assert.equal(r.kind, 'send');
  return r.kind === 'send' ? r.texts : [];
};

test('RealtimeGuard.fromProvider with a remote guard: deltas are judged in batches of REMOTE_CHECK_CHARS or at the end of an item, the messages held meanwhile, in order', async () => {
  const seen: string[][] = [];
  const g = remoteRt(remote(seen));
  const piece = 'x'.repeat(REMOTE_CHECK_CHARS / 4);
  const audio = JSON.stringify({ type: 'response.audio.delta', item_id: 'a', delta: 'AAAA' });
  const released: string[] = [];
  released.push(...await sent(g.fromProvider(delta('a', piece))));
  released.push(...await sent(g.fromProvider(audio)));
  released.push(...await sent(g.fromProvider(delta('a', piece))));
  released.push(...await sent(g.fromProvider(delta('a', piece))));
  assert.equal(released.length, 0, 'held until the batch is full');
  assert.equal(seen.length, 0);
  released.push(...await sent(g.fromProvider(delta('a', piece))));
  assert.equal(seen.length, 1, 'one call for the first REMOTE_CHECK_CHARS characters');
  assert.deepEqual(released, [delta('a', piece), audio, delta('a', piece), delta('a', piece), delta('a', piece)], 'released together, in order');
  assert.deepEqual(await sent(g.fromProvider(delta('a', 'tail'))), []);
  const done = JSON.stringify({ type: 'response.output_text.done', item_id: 'a', text: '…' });
  assert.deepEqual(await sent(g.fromProvider(done)), [delta('a', 'tail'), done], 'the end of the item judges what is held');
  assert.equal(seen.length, 2);
  assert.equal(seen[1]?.[0], piece.repeat(4) + 'tail', 'the guard sees the item\'s whole text so far');
  assert.deepEqual(await sent(g.fromProvider(JSON.stringify({ type: 'response.done' }))), [JSON.stringify({ type: 'response.done' })], 'nothing unjudged: passes at once');
  assert.equal(seen.length, 2);
});

test('RealtimeGuard.fromProvider with a remote guard: a rejected batch never reaches the client', async () => {
  const seen: string[][] = [];
  const g = remoteRt(remote(seen, 'secret'));
  assert.deepEqual(await sent(g.fromProvider(delta('a', 'the secret'))), []);
  const v = await g.fromProvider(JSON.stringify({ type: 'response.output_text.done', item_id: 'a' }));
  assert.equal(v.kind, 'reject');
});

/** switchboard_policy_outcomes_total{policy="promptGuard"} as the registry renders it. */
async function guardOutcomes(): Promise<Record<string, number>> {
  const registry = new Registry();
  registerAiMetrics(registry);
  const out: Record<string, number> = {};
  for (const line of (await registry.metrics()).split('\n')) {
    const m = /^switchboard_policy_outcomes_total\{policy="promptGuard",outcome="(\w+)"\} (\d+)/.exec(line);
    if (m) out[m[1] as string] = Number(m[2]);
  }
  return out;
}

test('RealtimeGuard outcome metric: a session counts one verdict per phase, when it ends or is rejected', async () => {
  let before = await guardOutcomes();
  const g = rt();
  for (let i = 0; i < 5; i++) sync(g.fromProvider(delta('a', `word ${i} `)));
  for (let i = 0; i < 3; i++) sync(g.fromClient(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `hi ${i}` }] } })));
  assert.deepEqual(await guardOutcomes(), before, 'nothing counted while the session runs');
  g.end();
  g.end();
  let after = await guardOutcomes();
  assert.equal((after.pass ?? 0) - (before.pass ?? 0), 2, 'one pass for the client messages, one for the provider text');
  before = after;
  const r = rt();
  sync(r.fromProvider(delta('a', 'ssn 123-45')));
  assert.equal(sync(r.fromProvider(delta('a', '-6789'))).kind, 'reject');
  r.end();
  after = await guardOutcomes();
  assert.deepEqual([(after.reject ?? 0) - (before.reject ?? 0), (after.pass ?? 0) - (before.pass ?? 0)], [1, 0]);
});

test('RealtimeGuard.fromProvider with a remote guard: held messages are judged at once past MAX_HELD_CHARS (audio between transcript deltas)', async () => {
  const seen: string[][] = [];
  const g = remoteRt(remote(seen));
  assert.deepEqual(await sent(g.fromProvider(delta('a', 'hi'))), []);
  const audio = JSON.stringify({ type: 'response.audio.delta', item_id: 'a', delta: 'A'.repeat(MAX_HELD_CHARS / 2) });
  assert.deepEqual(await sent(g.fromProvider(audio)), []);
  assert.equal((await sent(g.fromProvider(audio))).length, 3, 'the bound releases what was held');
  assert.equal(seen.length, 1);
});
