import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePromptGuard, GuardConfigError, promptGuardOf, registerGuardKind } from './compile.ts';
import './kinds.ts';
import { regexGuard } from './regex.ts';
import { guardJsonBody, runGuards, type GuardOutcome, type GuardRun } from './run.ts';
import { completeEventsEnd, REMOTE_CHECK_CHARS, StreamGuard, type StreamVerdict } from './stream.ts';
import { requestSlots, responseSlots } from './texts.ts';
import type { CompiledGuard, GuardVerdict } from './types.ts';
import type { AiPolicy } from '../../../../ir/ai.ts';
import { SpanStatusCode } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { registerAiMetrics } from '../../../telemetry/ai-metrics.ts';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { compileTracing } from '../../../telemetry/tracing/compile.ts';
import { runTraced, startRequestTrace } from '../../../telemetry/tracing/request-trace.ts';

const run: GuardRun = { phase: 'request', headers: {}, streaming: false, signal: new AbortController().signal };
const seg = (...texts: string[]) => texts.map((text) => ({ role: 'user', text }));

/** A guard kind for tests: answers what it is told, synchronously or not, or fails. */
function fake(name: string, answer: GuardVerdict | 'throw' | 'reject-promise', opts: { async?: boolean; failOpen?: boolean; seen?: string[][] } = {}): CompiledGuard {
  return {
    kind: name, rejectStatus: 451, rejectMessage: `${name} said no`, failOpen: opts.failOpen ?? false,
    check(input) {
      opts.seen?.push(input.segments.map((s) => s.text));
      if (answer === 'throw') throw new Error('service down');
      if (answer === 'reject-promise') return Promise.reject(new Error('service down'));
      return opts.async ? Promise.resolve(answer) : answer;
    },
  };
}

const RUNS: Record<string, { guards: () => CompiledGuard[]; want: GuardOutcome; async: boolean }> = {
  'no guard objects: pass': { guards: () => [fake('a', { action: 'pass' })], want: { kind: 'pass' }, async: false },
  'the first rejection wins': { guards: () => [fake('a', { action: 'pass' }), fake('b', { action: 'reject' }), fake('c', { action: 'reject' })], want: { kind: 'reject', status: 451, message: 'b said no', guard: 'b', failed: false }, async: false },
  'a mask reaches the outcome': { guards: () => [fake('a', { action: 'mask', segments: ['x', 'Y'] })], want: { kind: 'pass', texts: ['x', 'Y'] }, async: false },
  'an async guard makes the run async': { guards: () => [fake('a', { action: 'pass' }, { async: true }), fake('b', { action: 'reject' })], want: { kind: 'reject', status: 451, message: 'b said no', guard: 'b', failed: false }, async: true },
  'FailClosed: a throwing guard rejects': { guards: () => [fake('a', 'throw')], want: { kind: 'reject', status: 451, message: 'a said no', guard: 'a', failed: true }, async: false },
  'FailClosed: a rejected promise rejects': { guards: () => [fake('a', 'reject-promise')], want: { kind: 'reject', status: 451, message: 'a said no', guard: 'a', failed: true }, async: true },
  'FailOpen: a failing guard lets the text on to the next guard': { guards: () => [fake('a', 'reject-promise', { failOpen: true }), fake('b', { action: 'mask', segments: ['m', 'n'] })], want: { kind: 'pass', texts: ['m', 'n'] }, async: true },
  'a mask of the wrong length fails the guard (closed)': { guards: () => [fake('a', { action: 'mask', segments: ['x'] })], want: { kind: 'reject', status: 451, message: 'a said no', guard: 'a', failed: true }, async: false },
};

for (const [name, row] of Object.entries(RUNS)) {
  test(`runGuards: ${name}`, async () => {
    const out = runGuards(row.guards(), seg('x', 'y'), run);
    assert.equal(out instanceof Promise, row.async);
    assert.deepEqual(await out, row.want);
  });
}

test('runGuards: each guard sees the text the previous one masked', async () => {
  const seen: string[][] = [];
  await runGuards([fake('a', { action: 'mask', segments: ['A', 'y'] }, { async: true }), fake('b', { action: 'pass' }, { seen })], seg('x', 'y'), run);
  assert.deepEqual(seen, [['A', 'y']]);
});

test('runGuards: on a stream a mask is not applied (the text passes as it is)', () => {
  assert.deepEqual(runGuards([fake('a', { action: 'mask', segments: ['A'] })], seg('x'), { ...run, streaming: true }), { kind: 'pass' });
});

test('compile: defaults of the response, unknown kinds and bad entries', () => {
  const g = compilePromptGuard({ request: [{ regex: { builtins: ['Ssn'] } }], response: [{ regex: { builtins: ['Ssn'] }, response: { statusCode: 400, message: 'nope' } }] });
  assert.equal(g?.streaming, false);
  assert.deepEqual([g?.request[0]?.rejectStatus, g?.request[0]?.rejectMessage], [403, 'The request was rejected due to inappropriate content']);
  assert.deepEqual([g?.response[0]?.rejectStatus, g?.response[0]?.rejectMessage], [400, 'nope']);
  assert.equal(compilePromptGuard({ streaming: 'Enabled', response: [{ regex: { builtins: ['Ssn'] } }] })?.streaming, true);
  assert.equal(compilePromptGuard({}), undefined);
  assert.throws(() => compilePromptGuard({ request: [{ noSuchKind: {} }] }), GuardConfigError);
  assert.throws(() => compilePromptGuard({ response: [{ providerAModeration: {} }] }), /exactly one of regex, webhook, cloudAGuardrails, cloudCShield/);
  assert.throws(() => compilePromptGuard({ request: [{ regex: {}, webhook: {} }] }), GuardConfigError);
});

test('compile: the registered factory builds each entry, with its path and response', () => {
  const calls: unknown[] = [];
  registerGuardKind('regex', (spec, ctx) => {
    calls.push([spec, ctx]);
    return fake('regex', { action: 'pass' });
  });
  try {
    compilePromptGuard({ response: [{ regex: { builtins: ['Ssn'] } }, { regex: { matches: ['x'] }, response: { statusCode: 200 } }] });
  } finally {
    registerGuardKind('regex', regexGuard);
  }
  assert.deepEqual(calls, [
    [{ builtins: ['Ssn'] }, { phase: 'response', path: 'response[0].regex', rejectStatus: 403, rejectMessage: 'The response was rejected due to inappropriate content' }],
    [{ matches: ['x'] }, { phase: 'response', path: 'response[1].regex', rejectStatus: 200, rejectMessage: 'The response was rejected due to inappropriate content' }],
  ]);
});

test('promptGuardOf: compiled once per policy object; a broken policy throws every time', () => {
  const policy: AiPolicy = { promptGuard: { request: [{ regex: { builtins: ['Email'] } }] } };
  assert.equal(promptGuardOf(policy), promptGuardOf(policy));
  assert.equal(promptGuardOf({}), undefined);
  const broken: AiPolicy = { promptGuard: { request: [{ regex: { matches: ['('] } }] } };
  assert.throws(() => promptGuardOf(broken), GuardConfigError);
  assert.throws(() => promptGuardOf(broken), GuardConfigError);
});

const REQUEST_TEXT: Record<string, { route: 'Completions' | 'Messages' | 'Responses' | 'Embeddings'; body: Record<string, unknown>; want: [string, string][] }> = {
  'chat: strings, parts, every role; images skipped': {
    route: 'Completions',
    body: { messages: [{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'text', text: 'u' }, { type: 'image_url', image_url: { url: 'x' } }] }, { role: 'assistant', content: 'a', tool_calls: [{ function: { arguments: '{}' } }] }, { role: 'tool', content: 't' }] },
    want: [['system', 's'], ['user', 'u'], ['assistant', 'a'], ['tool', 't']],
  },
  'messages: system blocks, text and tool results': {
    route: 'Messages',
    body: { system: [{ type: 'text', text: 's' }], messages: [{ role: 'user', content: 'u' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }, { type: 'tool_result', tool_use_id: 'y', content: [{ type: 'text', text: 'r2' }] }] }] },
    want: [['system', 's'], ['user', 'u'], ['tool', 'r'], ['tool', 'r2']],
  },
  'responses: instructions, items, function outputs': {
    route: 'Responses',
    body: { instructions: 'i', input: [{ role: 'user', content: [{ type: 'input_text', text: 'u' }] }, { type: 'function_call_output', call_id: 'c', output: 'o' }, { type: 'function_call', arguments: '{}' }] },
    want: [['system', 'i'], ['user', 'u'], ['tool', 'o']],
  },
  'responses: a string input': { route: 'Responses', body: { input: 'u' }, want: [['user', 'u']] },
  'embeddings: strings, token arrays skipped': { route: 'Embeddings', body: { input: ['a', [1, 2], 'b'] }, want: [['user', 'a'], ['user', 'b']] },
};

for (const [name, row] of Object.entries(REQUEST_TEXT)) {
  test(`requestSlots: ${name}`, () => {
    const slots = requestSlots(row.route, row.body);
    assert.deepEqual(slots.map((s) => [s.role, s.text]), row.want);
    slots.forEach((s) => s.write(`${s.text}!`));
    assert.deepEqual(requestSlots(row.route, row.body).map((s) => s.text), row.want.map(([, t]) => `${t}!`), 'writes land where the text was read');
  });
}

test('responseSlots: the answer text per format', () => {
  assert.deepEqual(responseSlots('Completions', { choices: [{ message: { content: 'a' } }, { message: { content: null } }] }).map((s) => s.text), ['a']);
  assert.deepEqual(responseSlots('Messages', { content: [{ type: 'text', text: 'a' }, { type: 'tool_use', input: {} }] }).map((s) => s.text), ['a']);
  assert.deepEqual(responseSlots('Responses', { output: [{ type: 'reasoning' }, { type: 'message', content: [{ type: 'output_text', text: 'a' }] }] }).map((s) => s.text), ['a']);
});

test('guardJsonBody: masked bodies are re-serialised, others returned as they were', async () => {
  const guards = compilePromptGuard({ request: [{ regex: { builtins: ['Email'] } }] })?.request ?? [];
  const clean = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
  assert.equal((await guardJsonBody(guards, 'Completions', clean, run) as { body: Uint8Array }).body, clean);
  const out = await guardJsonBody(guards, 'Completions', Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'a@b.io' }] })), run);
  assert.equal(out.kind === 'pass' && Buffer.from(out.body).toString(), '{"messages":[{"role":"user","content":"<EMAIL>"}]}');
  const notJson = Buffer.from('not json');
  assert.equal((await guardJsonBody(guards, 'Completions', notJson, run) as { body: Uint8Array }).body, notJson);
});

test('completeEventsEnd: the end of the last blank line', () => {
  assert.equal(completeEventsEnd(Buffer.from('data: a\n\ndata: b')), 9);
  assert.equal(completeEventsEnd(Buffer.from('data: a\r\n\r\n')), 11);
  assert.equal(completeEventsEnd(Buffer.from('data: a\n')), 0);
});

test('StreamGuard: judges accumulated text across events, holds partial events, rejects in the client format', () => {
  const guards = compilePromptGuard({ streaming: 'Enabled', response: [{ regex: { builtins: ['Ssn'], action: 'Reject' } }] })?.response ?? [];
  const sg = new StreamGuard(guards, 'Completions', { headers: {}, signal: new AbortController().signal });
  const chunk = (t: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
  const first = sg.check(Buffer.from(chunk('ssn 123-45') + 'data: {"cho'));
  assert.ok(!(first instanceof Promise) && first.kind === 'write');
  assert.equal(Buffer.from(first.bytes).toString(), chunk('ssn 123-45'), 'the partial event is held');
  const second = sg.check(Buffer.from(`ices":[{"index":0,"delta":{"content":"-6789"}}]}\n\n`));
  assert.ok(!(second instanceof Promise) && second.kind === 'reject');
  assert.match(Buffer.from(second.rejection).toString(), /^data: \{"error":\{"message":"The response was rejected due to inappropriate content","type":"permission_error","param":null,"code":"guard_rejected"\}\}\n\n$/);
});

test('runGuards on a traced request: a guard that answers later is a prompt_guard CLIENT span (a failed one marked so); a synchronous one is none', async () => {
  const exporter = new InMemorySpanExporter();
  const tracing = compileTracing({ url: 'http://x', randomSampling: 'true' }, { endpoint: () => 'http://x', exporter }, () => undefined);
  assert.ok(tracing);
  const trace = startRequestTrace(tracing, { method: 'POST', url: '/', httpVersion: '1.1', headers: {}, socket: {} } as unknown as Parameters<typeof startRequestTrace>[1], 'http');
  assert.ok(trace);
  await runTraced(trace, () => runGuards([fake('sync', { action: 'pass' }), fake('remote', { action: 'pass' }, { async: true }), fake('down', 'reject-promise', { failOpen: true })], seg('x'), run));
  trace.end(200, { gateway: '', listener: '', route: '', backend: '' });
  await tracing.provider.forceFlush();
  const guards = exporter.getFinishedSpans().filter((s) => s.name === 'prompt_guard');
  await tracing.provider.shutdown();
  assert.deepEqual(guards.map((s) => [s.attributes['switchboard.guard.kind'], s.attributes['switchboard.guard.phase'], s.status.code]), [['remote', 'request', SpanStatusCode.UNSET], ['down', 'request', SpanStatusCode.ERROR]]);
});

test('StreamGuard: a remote guard judges in batches of REMOTE_CHECK_CHARS, holding the output until judged; the end judges the rest', async () => {
  const seen: string[][] = [];
  const remote = fake('webhook', { action: 'pass' }, { async: true, seen });
  const sg = new StreamGuard([remote], 'Completions', { headers: {}, signal: new AbortController().signal });
  const chunk = (t: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
  const written: string[] = [];
  const piece = 'x'.repeat(REMOTE_CHECK_CHARS / 4);
  for (let i = 0; i < 6; i++) {
    const v = await sg.check(Buffer.from(chunk(piece)));
    assert.equal(v.kind, 'write');
    if (v.kind === 'write' && v.bytes.length > 0) written.push(Buffer.from(v.bytes).toString());
  }
  assert.equal(seen.length, 1, 'one call for the first 256 characters');
  assert.equal(written.join(''), chunk(piece).repeat(4), 'the first four events, released together after the call');
  const end = await sg.flush();
  assert.equal(end.kind === 'write' && Buffer.from(end.bytes).toString(), chunk(piece).repeat(2), 'the rest, judged at the end');
  assert.equal(seen.length, 2);
  assert.equal(seen[1]?.[0]?.length, REMOTE_CHECK_CHARS / 4 * 6, 'the guard sees the whole text so far');
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

const OUTCOME_ROWS: Record<string, { guards: () => CompiledGuard[]; moves: Record<string, number> }> = {
  'a pass counts pass': { guards: () => [fake('a', { action: 'pass' })], moves: { pass: 1 } },
  'a mask counts mask': { guards: () => [fake('a', { action: 'mask', segments: ['x', 'Y'] }, { async: true })], moves: { mask: 1 } },
  'a rejection counts reject': { guards: () => [fake('a', { action: 'reject' })], moves: { reject: 1 } },
  'FailClosed: a failing guard counts error, not reject': { guards: () => [fake('a', 'throw')], moves: { error: 1 } },
  'FailOpen: a failing guard counts error and the run its outcome': { guards: () => [fake('a', 'reject-promise', { failOpen: true }), fake('b', { action: 'pass' })], moves: { error: 1, pass: 1 } },
};

for (const [name, row] of Object.entries(OUTCOME_ROWS)) {
  test(`runGuards outcome metric: ${name}`, async () => {
    const before = await guardOutcomes();
    await runGuards(row.guards(), seg('x', 'y'), run);
    const after = await guardOutcomes();
    for (const outcome of ['pass', 'mask', 'reject', 'error']) {
      assert.equal((after[outcome] ?? 0) - (before[outcome] ?? 0), row.moves[outcome] ?? 0, outcome);
    }
  });
}

/** A streamed answer of `pieces` text deltas (chat completions), each a chunk of its own. */
async function streamThrough(sg: StreamGuard, pieces: readonly string[]): Promise<StreamVerdict['kind']> {
  const chunk = (t: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: t } }] })}\n\n`;
  for (const piece of pieces) {
    const v = await sg.check(Buffer.from(chunk(piece)));
    if (v.kind === 'reject') return 'reject';
  }
  return (await sg.flush()).kind;
}

const STREAM_OUTCOME_ROWS: Record<string, { guards: () => CompiledGuard[]; pieces: string[]; moves: Record<string, number> }> = {
  'a local guard judging every delta of a passing stream: one pass': { guards: () => [fake('regex', { action: 'pass' })], pieces: ['a', 'b', 'c', 'd'], moves: { pass: 1 } },
  'a remote guard judging in batches: one pass': { guards: () => [fake('webhook', { action: 'pass' }, { async: true })], pieces: Array.from({ length: 6 }, () => 'x'.repeat(REMOTE_CHECK_CHARS / 2)), moves: { pass: 1 } },
  'a rejection after passing deltas: one reject, no pass': { guards: () => [rejectsOn('c')], pieces: ['a', 'b', 'c', 'd'], moves: { reject: 1 } },
  'FailOpen failing on every delta: one error, then the pass': { guards: () => [fake('regex', 'throw', { failOpen: true })], pieces: ['a', 'b', 'c'], moves: { error: 1, pass: 1 } },
  'FailClosed failing: one error, no reject': { guards: () => [fake('regex', 'throw')], pieces: ['a', 'b'], moves: { error: 1 } },
  'a stream without text: nothing counted': { guards: () => [fake('regex', { action: 'pass' })], pieces: [], moves: {} },
};

/** A local guard that passes until the text so far contains `needle`. */
function rejectsOn(needle: string): CompiledGuard {
  return { kind: 'regex', rejectStatus: 403, rejectMessage: 'no', failOpen: false, check: (input) => ({ action: input.segments.some((s) => s.text.includes(needle)) ? 'reject' : 'pass' }) };
}

for (const [name, row] of Object.entries(STREAM_OUTCOME_ROWS)) {
  test(`StreamGuard outcome metric, once per streamed answer: ${name}`, async () => {
    const before = await guardOutcomes();
    await streamThrough(new StreamGuard(row.guards(), 'Completions', { headers: {}, signal: new AbortController().signal }), row.pieces);
    const after = await guardOutcomes();
    for (const outcome of ['pass', 'mask', 'reject', 'error']) {
      assert.equal((after[outcome] ?? 0) - (before[outcome] ?? 0), row.moves[outcome] ?? 0, outcome);
    }
  });
}
