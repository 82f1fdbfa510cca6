import type { StreamEvent } from '../../canonical.ts';
import type { Usage } from '../../usage.ts';

/** Canonical events → SSE text in the client's format. */
export interface ClientEncoder {
  /** Everything but the end; an `error` event renders the error and ends the client stream. */
  push(ev: Exclude<StreamEvent, { type: 'usage' }>): string[];
  /** Upstream completed: close open blocks and send the terminal events with the final usage. */
  finish(usage: Usage | undefined): string[];
  /** Its blocks cannot interleave: concurrent tool calls must reach it one after another (tool-sequence.ts). */
  readonly sequentialToolCalls?: boolean;
}

/** What a stream encoder needs to know about the original client request. */
export interface EncoderRequestInfo {
  readonly model: string;
  /** Chat completions: the client asked for `stream_options.include_usage`. */
  readonly includeUsage?: boolean;
}
