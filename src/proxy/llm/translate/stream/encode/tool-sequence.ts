/**
 * Tool calls made one after another, for client formats whose blocks cannot interleave (Anthropic
 * content blocks, Responses output items). OpenAI-style upstreams may stream several calls at
 * once, each delta naming its call by index; an encoder that already closed a call's block would
 * have to drop the late deltas, leaving the client with broken arguments.
 *
 * The first call streams live. A call that starts while another is still streaming is held, its
 * arguments gathered, and released whole (start, then all its arguments in one delta) when
 * something else comes: other content, the finish reason, or the end of the stream. Upstreams
 * that stream calls in turn (OpenAI, Bedrock, Gemini) see their later calls arrive at the end of
 * the tool phase instead of live; nothing is lost either way.
 */
import type { StreamEvent } from '../../canonical.ts';

type Event = Exclude<StreamEvent, { type: 'usage' }>;
type ToolStart = Extract<StreamEvent, { type: 'tool_call_start' }>;

export class ToolCallSequencer {
  /** The call whose block the encoder has open. */
  #live: number | undefined;
  readonly #held = new Map<number, { readonly start: ToolStart; args: string }>();

  push(ev: Event): Event[] {
    switch (ev.type) {
      case 'tool_call_start':
        if (this.#live === undefined || this.#live === ev.key) {
          this.#live = ev.key;
          return [ev];
        }
        this.#held.set(ev.key, { start: ev, args: '' });
        return [];
      case 'tool_call_args': {
        const held = this.#held.get(ev.key);
        if (held === undefined) return [ev];
        held.args += ev.delta;
        return [];
      }
      // Errors end the stream: what was held cannot be completed.
      case 'error':
        this.#held.clear();
        return [ev];
      default: {
        // The common case (text, nothing held): no release pass.
        if (this.#held.size === 0) {
          this.#live = undefined;
          return [ev];
        }
        const out = this.release();
        this.#live = undefined;
        out.push(ev);
        return out;
      }
    }
  }

  /** The held calls, in the order they started; call before the encoder finishes. */
  release(): Event[] {
    const out: Event[] = [];
    for (const [key, held] of this.#held) {
      out.push(held.start);
      if (held.args !== '') out.push({ type: 'tool_call_args', key, delta: held.args });
      this.#live = key;
    }
    this.#held.clear();
    return out;
  }
}
