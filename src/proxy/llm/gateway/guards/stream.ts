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
import { runGuards, type GuardOutcome, type GuardRun } from './run.ts';

export const MAX_STREAM_WINDOW_CHARS = 16 * 1024;
export const MAX_STREAM_CHOICES = 64;
export const GUARD_REJECTED = 'guard_rejected';

type Rejection = Extract<GuardOutcome, { kind: 'reject' }>;

export class StreamGuard {
  readonly #guards: readonly CompiledGuard[];
  readonly #route: RouteType;
  readonly #run: GuardRun;
  readonly #parser = new SSEParser();
  /** Per choice (chat `index`, Responses `output_index`; Messages has one): its text so far, the tail kept. */
  readonly #texts = new Map<number, string>();

  constructor(guards: readonly CompiledGuard[], route: RouteType, run: Omit<GuardRun, 'phase' | 'streaming'>) {
    this.#guards = guards;
    this.#route = route;
    this.#run = { ...run, phase: 'response', streaming: true };
  }

  /**
   * Judges the text a chunk of client-format output adds. Undefined: write the chunk; otherwise
   * the error event to write instead, after which the stream ends.
   */
  check(chunk: Uint8Array): Uint8Array | undefined | Promise<Uint8Array | undefined> {
    const changed = new Set<number>();
    for (const ev of this.#parser.push(chunk)) {
      const delta = textDelta(this.#route, ev.event, ev.data);
      if (!delta || delta.text === '') continue;
      if (!this.#texts.has(delta.choice) && this.#texts.size >= MAX_STREAM_CHOICES) return this.#reject({ kind: 'reject', status: 403, message: 'too many streamed choices to guard', guard: 'stream', failed: true });
      const text = (this.#texts.get(delta.choice) ?? '') + delta.text;
      this.#texts.set(delta.choice, text.length > MAX_STREAM_WINDOW_CHARS ? text.slice(text.length - MAX_STREAM_WINDOW_CHARS) : text);
      changed.add(delta.choice);
    }
    if (changed.size === 0) return undefined;
    const segments: GuardSegment[] = [];
    for (const choice of changed) segments.push({ role: 'assistant', text: this.#texts.get(choice) as string });
    const outcome = runGuards(this.#guards, segments, this.#run);
    return outcome instanceof Promise ? outcome.then((o) => this.#verdict(o)) : this.#verdict(outcome);
  }

  #verdict(o: GuardOutcome): Uint8Array | undefined {
    return o.kind === 'reject' ? this.#reject(o) : undefined;
  }

  #reject(o: Rejection): Uint8Array {
    return Buffer.from(streamErrorEvent(this.#route, o.status, o.message));
  }
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
