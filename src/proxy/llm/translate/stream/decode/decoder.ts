import type { StreamEvent } from '../../canonical.ts';
import { SSEEventTooLargeError, SSEParser, type SSEEvent } from '../sse.ts';

/** Upstream stream bytes → canonical events. */
export interface UpstreamDecoder {
  push(chunk: Uint8Array): StreamEvent[];
  /** Upstream closed. A stream that closes before its terminal event yields an error event. */
  end(): StreamEvent[];
}

export const TRUNCATED: StreamEvent = { type: 'error', status: 502, errorType: 'api_error', message: 'upstream stream ended before the response was complete' };

/**
 * An upstream stream event (SSE event or event-stream frame) passed the gateway's size limit
 * (DEFAULT_MAX_SSE_EVENT_CHARS, MAX_EVENTSTREAM_FRAME_BYTES). The gateway gave up on the stream:
 * the client gets this as an error event in its format, and the upstream is no longer read.
 */
export const EVENT_TOO_LARGE: StreamEvent = { type: 'error', status: 502, errorType: 'api_error', message: 'upstream sent a stream event larger than the gateway accepts' };

/** Shared SSE plumbing: subclasses handle one parsed event at a time. */
export abstract class SSEDecoder implements UpstreamDecoder {
  private readonly parser = new SSEParser();
  protected complete = false;
  protected failed = false;

  push(chunk: Uint8Array): StreamEvent[] {
    return this.parse(() => this.parser.push(chunk));
  }

  end(): StreamEvent[] {
    const out = this.parse(() => this.parser.end());
    out.push(...this.finishStream());
    if (!this.complete && !this.failed) out.push(TRUNCATED);
    return out;
  }

  /** Called at upstream EOF before the truncation check; streams without a terminal marker decide here. */
  protected finishStream(): StreamEvent[] {
    return [];
  }

  /** Parsed events handled in order; an oversized event fails the stream (once). */
  private parse(read: () => SSEEvent[]): StreamEvent[] {
    if (this.failed) return [];
    try {
      return this.handleAll(read());
    } catch (err) {
      if (!(err instanceof SSEEventTooLargeError)) throw err;
      // The events before the oversized one are delivered (unless one of them ends the stream).
      const out = this.handleAll([...err.events]);
      if (this.complete || this.failed) return out;
      this.failed = true;
      out.push(EVENT_TOO_LARGE);
      return out;
    }
  }

  private handleAll(events: SSEEvent[]): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const e of events) {
      if (this.complete || this.failed) break;
      const quick = this.quick(e.data);
      if (quick !== undefined) {
        out.push(quick);
        continue;
      }
      let json: unknown;
      if (e.data === '[DONE]') {
        json = '[DONE]';
      } else {
        try {
          json = JSON.parse(e.data);
        } catch {
          this.failed = true;
          out.push({ type: 'error', status: 502, errorType: 'api_error', message: 'upstream sent a malformed stream event' });
          break;
        }
      }
      const produced = this.handle(e.event, json);
      if (produced.some((p) => p.type === 'error')) this.failed = true;
      out.push(...produced);
    }
    return out;
  }

  protected abstract handle(event: string | undefined, data: unknown): StreamEvent[];

  /**
   * A decoder's most common event read straight from its data, without JSON.parse: the event it
   * gives, or undefined to parse and `handle` as usual. Must give exactly what `handle` would.
   */
  protected quick(_data: string): StreamEvent | undefined {
    return undefined;
  }
}
