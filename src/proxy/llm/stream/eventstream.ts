/**
 * AWS binary event-stream framing (Bedrock converse-stream), decoded with the official codec.
 * Frames arrive split across reads: bytes are kept until the prelude's total length is present.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface EventStreamMessage {
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: Uint8Array;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export class EventStreamParser {
  private buffer: Uint8Array = new Uint8Array(0);

  push(chunk: Uint8Array): EventStreamMessage[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: EventStreamMessage[] = [];
    while (this.buffer.length >= 4) {
      const total = new DataView(this.buffer.buffer, this.buffer.byteOffset, 4).getUint32(0, false);
      if (this.buffer.length < total) break;
      const frame = this.buffer.subarray(0, total);
      this.buffer = this.buffer.subarray(total);
      // decode() verifies both CRCs and throws on a corrupt frame.
      const msg = codec.decode(frame);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(msg.headers)) headers[k] = String(v.value);
      out.push({ headers, payload: msg.body });
    }
    return out;
  }

  /** Bytes left over at the end mean a truncated frame. */
  get pendingBytes(): number {
    return this.buffer.length;
  }
}

/** Encodes one event frame (used to build recorded-shape Bedrock streams in tests and fixtures). */
export function encodeEventStreamMessage(eventType: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Uint8Array {
  const typeHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: messageType },
      [typeHeader]: { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}
