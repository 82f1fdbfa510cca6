import type { StreamEvent } from '../../canonical.ts';
import { SSEParser, type SSEEvent } from '../sse.ts';

/** Upstream stream bytes → canonical events. */
export interface UpstreamDecoder {
  push(chunk: Uint8Array): StreamEvent[];
  /** Upstream closed. A stream that closes before its terminal event yields an error event. */
  end(): StreamEvent[];
}

export const TRUNCATED: StreamEvent = { type: 'error', status: 502, errorType: 'api_error', message: 'upstream stream ended before the response was complete' };

/** Shared SSE plumbing: subclasses handle one parsed event at a time. */
export abstract class SSEDecoder implements UpstreamDecoder {
  private readonly parser = new SSEParser();
  protected complete = false;
  protected failed = false;

  push(chunk: Uint8Array): StreamEvent[] {
    return this.handleAll(this.parser.push(chunk));
  }

  end(): StreamEvent[] {
    const out = this.handleAll(this.parser.end());
    out.push(...this.finishStream());
    if (!this.complete && !this.failed) out.push(TRUNCATED);
    return out;
  }

  /** Called at upstream EOF before the truncation check; streams without a terminal marker decide here. */
  protected finishStream(): StreamEvent[] {
    return [];
  }

  private handleAll(events: SSEEvent[]): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const e of events) {
      if (this.complete || this.failed) break;
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
}
