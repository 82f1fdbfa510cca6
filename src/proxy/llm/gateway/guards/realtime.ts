/**
 * Prompt guards on a Realtime session (`streaming: Enabled`, SPEC.md): the client's text
 * messages are judged by the request guards (a Mask rewrites the message sent on), the provider's
 * text by the response guards as it streams (accumulated per output item, like a streamed answer;
 * Mask is not applied). A rejection sends the client an `error` event in OpenAI Realtime's shape
 * and ends the session. Text in a client message: `conversation.item.create` content parts and
 * function-call outputs, `session.update` and `response.create` instructions. Provider text:
 * `response.text.delta`, `response.output_text.delta`, `response.audio_transcript.delta`.
 */
import type { CompiledPromptGuard } from './compile.ts';
import { runGuards, guardSlots, type GuardOutcome, type GuardRun } from './run.ts';
import { MAX_STREAM_CHOICES, MAX_STREAM_WINDOW_CHARS, GUARD_REJECTED } from './stream.ts';
import type { TextSlot } from './texts.ts';

/** What to do with one message: send `text` on (unchanged or masked), or send `event` to the client and close. */
export type RealtimeVerdict = { readonly kind: 'send'; readonly text: string } | { readonly kind: 'reject'; readonly event: string };

const PROVIDER_TEXT_EVENTS = new Set(['response.text.delta', 'response.output_text.delta', 'response.audio_transcript.delta']);

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);

export class RealtimeGuard {
  readonly #guard: CompiledPromptGuard;
  readonly #run: Omit<GuardRun, 'phase' | 'streaming'>;
  /** The provider's text so far per output item (tail kept), insertion-ordered so the oldest goes first. */
  readonly #texts = new Map<string, string>();

  constructor(guard: CompiledPromptGuard, run: Omit<GuardRun, 'phase' | 'streaming'>) {
    this.#guard = guard;
    this.#run = run;
  }

  /** True when the session's messages are judged at all (`streaming: Enabled`, some guard). */
  static applies(guard: CompiledPromptGuard | undefined): guard is CompiledPromptGuard {
    return guard !== undefined && guard.streaming && (guard.request.length > 0 || guard.response.length > 0);
  }

  fromClient(text: string): RealtimeVerdict | Promise<RealtimeVerdict> {
    if (this.#guard.request.length === 0) return { kind: 'send', text };
    const event = parse(text);
    const slots = event ? clientSlots(event) : [];
    if (slots.length === 0) return { kind: 'send', text };
    const outcome = guardSlots(this.#guard.request, slots, { ...this.#run, phase: 'request', streaming: false });
    const verdict = (o: GuardOutcome): RealtimeVerdict => (o.kind === 'reject' ? rejection(o.message) : { kind: 'send', text: o.texts ? JSON.stringify(event) : text });
    return outcome instanceof Promise ? outcome.then(verdict) : verdict(outcome);
  }

  fromProvider(text: string): RealtimeVerdict | Promise<RealtimeVerdict> {
    if (this.#guard.response.length === 0 || !text.includes('.delta"')) return { kind: 'send', text };
    const event = parse(text);
    if (!event || !PROVIDER_TEXT_EVENTS.has(String(event.type)) || typeof event.delta !== 'string' || event.delta === '') return { kind: 'send', text };
    const item = typeof event.item_id === 'string' ? event.item_id : '';
    const sofar = (this.#texts.get(item) ?? '') + event.delta;
    this.#texts.delete(item);
    // Past the bound the oldest item's text is forgotten: items are judged as they stream, one at a time.
    if (this.#texts.size >= MAX_STREAM_CHOICES) this.#texts.delete(this.#texts.keys().next().value as string);
    this.#texts.set(item, sofar.length > MAX_STREAM_WINDOW_CHARS ? sofar.slice(sofar.length - MAX_STREAM_WINDOW_CHARS) : sofar);
    const outcome = runGuards(this.#guard.response, [{ role: 'assistant', text: this.#texts.get(item) as string }], { ...this.#run, phase: 'response', streaming: true });
    const verdict = (o: GuardOutcome): RealtimeVerdict => (o.kind === 'reject' ? rejection(o.message) : { kind: 'send', text });
    return outcome instanceof Promise ? outcome.then(verdict) : verdict(outcome);
  }
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
