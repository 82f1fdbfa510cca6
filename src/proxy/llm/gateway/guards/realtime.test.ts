import { test } from 'node:test';
import assert from 'node:assert/strict';
import './kinds.ts';
import { compilePromptGuard } from './compile.ts';
import { RealtimeGuard, type RealtimeVerdict } from './realtime.ts';

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
    if (v.kind === 'send' && row.sent) assert.match(v.text, row.sent);
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
