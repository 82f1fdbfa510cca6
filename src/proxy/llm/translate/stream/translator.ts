/**
 * The streaming interface the runtime drives: bytes from upstream in, bytes for the client out,
 * event by event, plus the usage seen so far.
 */
import type { StreamEvent } from '../canonical.ts';
import { mergeUsage, type Usage } from '../usage.ts';
import { EVENT_TOO_LARGE, type UpstreamDecoder } from './decode/decoder.ts';
import type { ClientEncoder } from './encode/encoder.ts';
import { ToolCallSequencer } from './encode/tool-sequence.ts';

export interface StreamTranslator {
  /** Feed one upstream chunk (any boundary); returns the bytes to write to the client now. */
  push(chunk: Uint8Array): Uint8Array[];
  /** Upstream ended; returns the final bytes (terminal events, or an error if the stream was cut). */
  end(): Uint8Array[];
  /** Usage gathered from the stream so far (final after `end`). */
  usage(): Usage | undefined;
  /** An error event was sent to the client (upstream error or truncation). */
  readonly failed: boolean;
  /** Nothing more will be written to the client: the caller should stop reading the upstream. */
  readonly done?: boolean;
}

function bytes(strings: string[]): Uint8Array[] {
  return strings.length ? [Buffer.from(strings.join(''))] : [];
}

/** Decodes upstream events to canonical ones and re-encodes them in the client's format. */
export class TranslatingStream implements StreamTranslator {
  private readonly decoder: UpstreamDecoder;
  private readonly encoder: ClientEncoder;
  private readonly sequencer: ToolCallSequencer | undefined;
  private seenUsage: Usage | undefined;
  private closed = false;
  failed = false;

  constructor(decoder: UpstreamDecoder, encoder: ClientEncoder) {
    this.decoder = decoder;
    this.encoder = encoder;
    this.sequencer = encoder.sequentialToolCalls ? new ToolCallSequencer() : undefined;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.closed) return [];
    return bytes(this.emit(this.decoder.push(chunk)));
  }

  end(): Uint8Array[] {
    if (this.closed) return [];
    const out = this.emit(this.decoder.end());
    if (!this.closed && this.sequencer) for (const ev of this.sequencer.release()) out.push(...this.encoder.push(ev));
    if (!this.closed) out.push(...this.encoder.finish(this.seenUsage));
    this.closed = true;
    return bytes(out);
  }

  usage(): Usage | undefined {
    return this.seenUsage;
  }

  get done(): boolean {
    return this.closed;
  }

  private emit(events: StreamEvent[]): string[] {
    const out: string[] = [];
    for (const ev of events) {
      if (this.closed) break;
      if (ev.type === 'usage') {
        this.seenUsage = mergeUsage(this.seenUsage, ev.usage);
        continue;
      }
      if (ev.type === 'start' && ev.usage) this.seenUsage = mergeUsage(this.seenUsage, ev.usage);
      if (this.sequencer) {
        for (const e of this.sequencer.push(ev)) out.push(...this.encoder.push(e));
      } else {
        out.push(...this.encoder.push(ev));
      }
      if (ev.type === 'error') {
        this.failed = true;
        this.closed = true;
      }
    }
    return out;
  }
}

/**
 * Same format in and out: upstream bytes reach the client untouched. The stream is still parsed
 * on the side for usage, and a cut-off stream gets an error event in the client's format.
 */
export class PassthroughStream implements StreamTranslator {
  private readonly sniffer: UpstreamDecoder;
  private readonly errorEncoder: ClientEncoder;
  private seenUsage: Usage | undefined;
  failed = false;
  done = false;

  constructor(sniffer: UpstreamDecoder, errorEncoder: ClientEncoder) {
    this.sniffer = sniffer;
    this.errorEncoder = errorEncoder;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.done) return [];
    const err = this.observe(this.sniffer.push(chunk));
    if (err === EVENT_TOO_LARGE) {
      // The gateway gave up on an event past its size limit: what was forwarded of it is cut off
      // by a blank line (the client drops or fails on it), then the error in the client's format.
      this.failed = true;
      this.done = true;
      return bytes(['\n\n', ...this.errorEncoder.push(err)]);
    }
    // Errors seen here were sent by the upstream itself and reach the client verbatim.
    if (err) this.failed = true;
    return [chunk];
  }

  end(): Uint8Array[] {
    if (this.done) return [];
    const err = this.observe(this.sniffer.end());
    if (!err || this.failed) return [];
    // The upstream stopped mid-answer: tell the client in its own format.
    this.failed = true;
    return bytes(this.errorEncoder.push(err));
  }

  usage(): Usage | undefined {
    return this.seenUsage;
  }

  private observe(events: StreamEvent[]): Extract<StreamEvent, { type: 'error' }> | undefined {
    let err: Extract<StreamEvent, { type: 'error' }> | undefined;
    for (const ev of events) {
      if (ev.type === 'usage' || (ev.type === 'start' && ev.usage)) this.seenUsage = mergeUsage(this.seenUsage, ev.usage ?? {});
      else if (ev.type === 'error') err ??= ev;
    }
    return err;
  }
}
