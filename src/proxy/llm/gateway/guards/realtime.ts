/**
 * Prompt guards on a Realtime session (`streaming: Enabled`, SPEC.md): the client's text
 * messages are judged by the request guards (a Mask rewrites the message sent on), the provider's
 * text by the response guards as it streams (accumulated per output item, like a streamed answer;
 * Mask is not applied). A rejection sends the client an `error` event in OpenAI Realtime's shape
 * and ends the session. Text in a client message: `conversation.item.create` content parts and
 * function-call outputs, `session.update` and `response.create` instructions. Provider text:
 * `response.text.delta`, `response.output_text.delta`, `response.audio_transcript.delta`.
 *
 * As on a stream (stream.ts), guards that call a service judge the provider's text in batches —
 * once REMOTE_CHECK_CHARS new characters arrived or an item (or the response) is done — and the
 * provider's messages wait meanwhile, in order, so nothing unjudged reaches the client; regex
 * guards judge every delta. Each phase of a session is one verdict in the outcome metric.
 */
import type { CompiledPromptGuard } from './compile.ts';
import { GuardTally, runGuards, guardSlots, type GuardOutcome, type GuardRun } from './run.ts';
import { MAX_STREAM_CHOICES, MAX_STREAM_WINDOW_CHARS, GUARD_REJECTED, REMOTE_CHECK_CHARS } from './stream.ts';
import type { GuardSegment } from './types.ts';
import type { TextSlot } from './texts.ts';

/**
 * What to do with one message: send `texts` on — the message (unchanged or masked), or the
 * provider messages a batch held back released together, or none while they are held — or send
 * `event` to the client and close.
 */
export type RealtimeVerdict = { readonly kind: 'send'; readonly texts: readonly string[] } | { readonly kind: 'reject'; readonly event: string };

const PROVIDER_TEXT_EVENTS = new Set(['response.text.delta', 'response.output_text.delta', 'response.audio_transcript.delta']);
/** Kinds that judge in process, cheaply enough to run on every delta (as on streams). */
const LOCAL_KINDS = new Set(['regex']);
const HELD: RealtimeVerdict = { kind: 'send', texts: [] };
/**
 * Held provider messages are judged at once past this many characters, whatever text they carry:
 * audio deltas between two transcript deltas must not pile up in memory (docs/security.md).
 */
export const MAX_HELD_CHARS = 1024 * 1024;

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);

export class RealtimeGuard {
  readonly #guard: CompiledPromptGuard;
  readonly #run: Omit<GuardRun, 'phase' | 'streaming'>;
  /** The provider's text so far per output item (tail kept), insertion-ordered so the oldest goes first. */
  readonly #texts = new Map<string, string>();
  /** Provider messages held back until the text they carry is judged (remote guards judge in batches), in order. */
  #pending: string[] = [];
  #pendingChars = 0;
  /** Items with text not judged yet, and how many characters arrived since the last judgement. */
  readonly #unjudged = new Set<string>();
  #unjudgedChars = 0;
  readonly #batchChars: number;
  readonly #requestTally = new GuardTally();
  readonly #responseTally = new GuardTally();

  constructor(guard: CompiledPromptGuard, run: Omit<GuardRun, 'phase' | 'streaming' | 'tally'>) {
    this.#guard = guard;
    this.#run = run;
    this.#batchChars = guard.response.every((g) => LOCAL_KINDS.has(g.kind)) ? 0 : REMOTE_CHECK_CHARS;
  }

  /** The session ended: each phase's verdict is counted once (provider messages still held are dropped, never judged). */
  end(): void {
    this.#requestTally.end();
    this.#responseTally.end();
    this.#pending = [];
    this.#pendingChars = 0;
  }

  /** True when the session's messages are judged at all (`streaming: Enabled`, some guard). */
  static applies(guard: CompiledPromptGuard | undefined): guard is CompiledPromptGuard {
    return guard !== undefined && guard.streaming && (guard.request.length > 0 || guard.response.length > 0);
  }

  fromClient(text: string): RealtimeVerdict | Promise<RealtimeVerdict> {
    if (this.#guard.request.length === 0) return { kind: 'send', texts: [text] };
    const event = parse(text);
    const slots = event ? clientSlots(event) : [];
    if (slots.length === 0) return { kind: 'send', texts: [text] };
    const outcome = guardSlots(this.#guard.request, slots, { ...this.#run, phase: 'request', streaming: false, tally: this.#requestTally });
    const verdict = (o: GuardOutcome): RealtimeVerdict => (o.kind === 'reject' ? this.#rejected(this.#requestTally, o.message) : { kind: 'send', texts: [o.texts ? JSON.stringify(event) : text] });
    return outcome instanceof Promise ? outcome.then(verdict) : verdict(outcome);
  }

  fromProvider(text: string): RealtimeVerdict | Promise<RealtimeVerdict> {
    if (this.#guard.response.length === 0) return { kind: 'send', texts: [text] };
    const delta = textDelta(text);
    if (delta) {
      const sofar = (this.#texts.get(delta.item) ?? '') + delta.text;
      this.#texts.delete(delta.item);
      // Past the bound the oldest item's text is forgotten: items are judged as they stream, one at a time.
      if (this.#texts.size >= MAX_STREAM_CHOICES) this.#texts.delete(this.#texts.keys().next().value as string);
      this.#texts.set(delta.item, sofar.length > MAX_STREAM_WINDOW_CHARS ? sofar.slice(sofar.length - MAX_STREAM_WINDOW_CHARS) : sofar);
      this.#unjudged.add(delta.item);
      this.#unjudgedChars += delta.text.length;
    }
    // Nothing waits for a judgement: the message goes on at once (held messages imply unjudged text).
    if (this.#unjudged.size === 0) return { kind: 'send', texts: [text] };
    this.#pending.push(text);
    this.#pendingChars += text.length;
    if (this.#unjudgedChars < this.#batchChars && this.#pendingChars < MAX_HELD_CHARS && !endsItem(text)) return HELD;
    return this.#judgePending();
  }

  /** The unjudged items' text, judged now; the held messages are released on a pass. */
  #judgePending(): RealtimeVerdict | Promise<RealtimeVerdict> {
    const out = this.#pending;
    this.#pending = [];
    this.#pendingChars = 0;
    const segments: GuardSegment[] = [];
    for (const item of this.#unjudged) {
      const text = this.#texts.get(item);
      if (text !== undefined) segments.push({ role: 'assistant', text });
    }
    this.#unjudged.clear();
    this.#unjudgedChars = 0;
    if (segments.length === 0) return { kind: 'send', texts: out };
    const outcome = runGuards(this.#guard.response, segments, { ...this.#run, phase: 'response', streaming: true, tally: this.#responseTally });
    const verdict = (o: GuardOutcome): RealtimeVerdict => (o.kind === 'reject' ? this.#rejected(this.#responseTally, o.message) : { kind: 'send', texts: out });
    return outcome instanceof Promise ? outcome.then(verdict) : verdict(outcome);
  }

  /** A rejection ends the session: its phase's verdict is counted now. */
  #rejected(tally: GuardTally, message: string): RealtimeVerdict {
    tally.end();
    return rejection(message);
  }
}

/** The text a provider event adds and to which item; undefined for other events (audio deltas are not parsed past a substring check). */
function textDelta(text: string): { item: string; text: string } | undefined {
  if (!text.includes('.delta"')) return undefined;
  const event = parse(text);
  if (!event || !PROVIDER_TEXT_EVENTS.has(String(event.type)) || typeof event.delta !== 'string' || event.delta === '') return undefined;
  return { item: typeof event.item_id === 'string' ? event.item_id : '', text: event.delta };
}

/** An item's text, a content part, an output item or the response is done: what was held is judged now. */
function endsItem(text: string): boolean {
  if (!text.includes('.done"')) return false;
  const type = parse(text)?.type;
  return typeof type === 'string' && type.startsWith('response.') && type.endsWith('.done');
}

/** OpenAI Realtime's server `error` event. */
function rejection(message: string): RealtimeVerdict {
  return { kind: 'reject', event: JSON.stringify({ type: 'error', event_id: 'event_guard_rejected', error: { type: 'invalid_request_error', code: GUARD_REJECTED, message, param: null } }) };
}

function parse(text: string): Dict | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return isDict(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function stringSlot(holder: Dict, key: string, role: string, out: TextSlot[]): void {
  const v = holder[key];
  if (typeof v === 'string' && v !== '') out.push({ role, text: v, write: (t) => { holder[key] = t; } });
}

function clientSlots(event: Dict): TextSlot[] {
  const out: TextSlot[] = [];
  if (event.type === 'session.update' && isDict(event.session)) stringSlot(event.session, 'instructions', 'system', out);
  else if (event.type === 'response.create' && isDict(event.response)) stringSlot(event.response, 'instructions', 'system', out);
  else if (event.type === 'conversation.item.create' && isDict(event.item)) {
    const item = event.item;
    const role = typeof item.role === 'string' ? item.role : 'user';
    if (item.type === 'function_call_output') stringSlot(item, 'output', 'tool', out);
    else for (const part of Array.isArray(item.content) ? item.content : []) if (isDict(part) && (part.type === 'input_text' || part.type === 'text' || part.type === 'output_text')) stringSlot(part, 'text', role, out);
  }
  return out;
}
