/**
 * Response guards on a streamed answer (`streaming: Enabled`). The runner reads the events the
 * gateway is about to write to the client (the client's own format, after translation), adds each
 * text delta to its choice's text, and has the guards judge that text before the chunk is
 * written — so a rejected piece never reaches the client. A rejection ends the stream with an
 * error event in the client's stream format; Mask is not applied to streams (SPEC.md). Bounds
 * (docs/security.md): guards see the last MAX_STREAM_WINDOW_CHARS characters of each choice, at
 * most MAX_STREAM_CHOICES choices (more fail closed).
 */
import type { RouteType } from '../../../../ir/ai.ts';
import { SSEParser } from '../../../http/sse.ts';
import { formatSSE } from '../../translate/stream/sse.ts';
import { errorBody } from '../../translate/errors.ts';
import { openAIErrorType } from '../../../http/error-format.ts';
import type { CompiledGuard, GuardSegment } from './types.ts';
import { GuardTally, runGuards, type GuardOutcome, type GuardRun } from './run.ts';

export const MAX_STREAM_WINDOW_CHARS = 16 * 1024;
export const MAX_STREAM_CHOICES = 64;
/**
 * With a guard that calls a service (any kind but regex), text is judged once this many new
 * characters have arrived (or the stream ends) rather than on every delta: the output is held
 * meanwhile, so nothing unjudged reaches the client, and a 500-token answer costs a few calls.
 */
export const REMOTE_CHECK_CHARS = 256;
/** Kinds that judge in process, cheaply enough to run on every delta. */
const LOCAL_KINDS = new Set(['regex']);
export const GUARD_REJECTED = 'guard_rejected';

type Rejection = Extract<GuardOutcome, { kind: 'reject' }>;

/** What to do with a chunk of output: write `bytes` (possibly empty), or write `rejection` and end the stream. */
export type StreamVerdict = { readonly kind: 'write'; readonly bytes: Uint8Array } | { readonly kind: 'reject'; readonly rejection: Uint8Array };

const EMPTY = new Uint8Array(0);

export class StreamGuard {
  readonly #guards: readonly CompiledGuard[];
  readonly #route: RouteType;
  readonly #run: GuardRun;
  readonly #parser = new SSEParser();
  /** Per choice (chat `index`, Responses `output_index`; Messages has one): its text so far, the tail kept. */
  readonly #texts = new Map<number, string>();
  /**
   * Output after the last complete event, held back: a same-format stream passes the provider's
   * chunks as they came, and a rejection must not land inside a half-written event. One event at
   * most (the stream's decoder bounds an event's size).
   */
  #held: Uint8Array = EMPTY;
  /** Complete events whose text is not judged yet (remote guards judge in batches), and what they added. */
  #pending: Uint8Array[] = [];
  readonly #unjudged = new Set<number>();
  #unjudgedChars = 0;
  readonly #batchChars: number;
  /** The streamed answer is one verdict in the outcome metric, counted when it ends or is rejected. */
  readonly #tally = new GuardTally();

  constructor(guards: readonly CompiledGuard[], route: RouteType, run: Omit<GuardRun, 'phase' | 'streaming' | 'tally'>) {
    this.#guards = guards;
    this.#route = route;
    this.#run = { ...run, phase: 'response', streaming: true, tally: this.#tally };
    this.#batchChars = guards.every((g) => LOCAL_KINDS.has(g.kind)) ? 0 : REMOTE_CHECK_CHARS;
  }

  /** Judges the text the complete events of `chunk` (with what was held) add, before any of it is written. */
  check(chunk: Uint8Array): StreamVerdict | Promise<StreamVerdict> {
    const data = this.#held.length === 0 ? chunk : Buffer.concat([this.#held, chunk]);
    const cut = completeEventsEnd(data);
    this.#held = cut === data.length ? EMPTY : data.subarray(cut);
    return this.#judge(cut === data.length ? data : data.subarray(0, cut));
  }

  /** The stream ended: whatever was held, judged like the rest; the verdict is counted. */
  flush(): StreamVerdict | Promise<StreamVerdict> {
    const rest = this.#held;
    this.#held = EMPTY;
    const verdict = rest.length === 0 && this.#pending.length === 0 ? { kind: 'write', bytes: rest } as const : this.#judge(rest, true);
    if (verdict instanceof Promise) return verdict.then((v) => this.#ended(v));
    return this.#ended(verdict);
  }

  #ended(verdict: StreamVerdict): StreamVerdict {
    this.#tally.end();
    return verdict;
  }

  #judge(bytes: Uint8Array, last = false): StreamVerdict | Promise<StreamVerdict> {
    if (bytes.length === 0 && !last) return { kind: 'write', bytes };
    const events = last ? [...this.#parser.push(bytes), ...this.#parser.end()] : this.#parser.push(bytes);
    for (const ev of events) {
      const delta = textDelta(this.#route, ev.event, ev.data);
      if (!delta || delta.text === '') continue;
      if (!this.#texts.has(delta.choice) && this.#texts.size >= MAX_STREAM_CHOICES) return this.#reject({ kind: 'reject', status: 403, message: 'too many streamed choices to guard', guard: 'stream', failed: true });
      const text = (this.#texts.get(delta.choice) ?? '') + delta.text;
      this.#texts.set(delta.choice, text.length > MAX_STREAM_WINDOW_CHARS ? text.slice(text.length - MAX_STREAM_WINDOW_CHARS) : text);
      this.#unjudged.add(delta.choice);
      this.#unjudgedChars += delta.text.length;
    }
    if (this.#unjudged.size === 0) return { kind: 'write', bytes };
    if (!last && this.#unjudgedChars < this.#batchChars) {
      this.#pending.push(bytes);
      return { kind: 'write', bytes: EMPTY };
    }
    const out = this.#pending.length === 0 ? bytes : Buffer.concat([...this.#pending, bytes]);
    this.#pending = [];
    const segments: GuardSegment[] = [];
    for (const choice of this.#unjudged) segments.push({ role: 'assistant', text: this.#texts.get(choice) as string });
    this.#unjudged.clear();
    this.#unjudgedChars = 0;
    const outcome = runGuards(this.#guards, segments, this.#run);
    const verdict = (o: GuardOutcome): StreamVerdict => (o.kind === 'reject' ? this.#reject(o) : { kind: 'write', bytes: out });
    return outcome instanceof Promise ? outcome.then(verdict) : verdict(outcome);
  }

  #reject(o: Rejection): StreamVerdict {
    // A rejection ends the stream: the verdict is counted now (the bound's own rejection too, as `error`).
    this.#tally.record(o);
    this.#tally.end();
    return { kind: 'reject', rejection: Buffer.from(streamErrorEvent(this.#route, o.status, o.message)) };
  }
}

/** The end of the last complete event (after its blank line) in `data`; 0 when none is complete. */
export function completeEventsEnd(data: Uint8Array): number {
  for (let i = data.length - 1; i > 0; i--) {
    if (data[i] !== 10 && data[i] !== 13) continue;
    // A blank line: LF LF, CR CR, or CRLF CRLF ending at i.
    const prev = data[i - 1];
    if ((data[i] === 10 && prev === 10) || (data[i] === 13 && prev === 13)) return i + 1;
    if (data[i] === 10 && prev === 13 && i >= 3 && data[i - 2] === 10 && data[i - 3] === 13) return i + 1;
  }
  return 0;
}

/** A guard's rejection as the last event of a stream, in the client's stream format. */
export function streamErrorEvent(route: RouteType, status: number, message: string): string {
  if (route === 'Messages') return formatSSE(JSON.stringify(errorBody({ status, message }, 'anthropic')), 'error');
  if (route === 'Responses') return formatSSE(JSON.stringify({ type: 'error', code: GUARD_REJECTED, message, param: null }), 'error');
  return formatSSE(JSON.stringify({ error: { message, type: openAIErrorType(status), param: null, code: GUARD_REJECTED } }));
}

/** The text an output event adds and to which choice; undefined for events without text. */
function textDelta(route: RouteType, event: string | undefined, data: string): { choice: number; text: string } | undefined {
  // Cheap filters first: most events of a stream carry text, the others are skipped unparsed.
  if (route === 'Completions') {
    if (!data.includes('"content"')) return undefined;
    const parsed = parse(data) as { choices?: { index?: unknown; delta?: { content?: unknown } }[] } | undefined;
    const c = parsed?.choices?.[0];
    return typeof c?.delta?.content === 'string' ? { choice: typeof c.index === 'number' ? c.index : 0, text: c.delta.content } : undefined;
  }
  if (route === 'Messages') {
    if (event !== 'content_block_delta') return undefined;
    const parsed = parse(data) as { delta?: { type?: unknown; text?: unknown } } | undefined;
    return parsed?.delta?.type === 'text_delta' && typeof parsed.delta.text === 'string' ? { choice: 0, text: parsed.delta.text } : undefined;
  }
  if (route === 'Responses') {
    if (event !== 'response.output_text.delta') return undefined;
    const parsed = parse(data) as { output_index?: unknown; delta?: unknown } | undefined;
    return typeof parsed?.delta === 'string' ? { choice: typeof parsed.output_index === 'number' ? parsed.output_index : 0, text: parsed.delta } : undefined;
  }
  return undefined;
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}
