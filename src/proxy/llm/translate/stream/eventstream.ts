/**
 * AWS binary event-stream framing (Bedrock converse-stream), decoded with the official codec.
 *
 * Frames arrive split across reads. Linear whatever the chunking: a frame that arrives whole in
 * one chunk is decoded in place; one split across chunks is copied once into a buffer of the
 * size its prelude announces. That size is bounded ({@link MAX_EVENTSTREAM_FRAME_BYTES}): a frame
 * announcing more throws {@link EventStreamFrameTooLargeError} before anything is buffered.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface EventStreamMessage {
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: Uint8Array;
}

/** Largest frame accepted: AWS caps an event-stream payload at 16 MiB; headers add at most 128 KiB. */
export const MAX_EVENTSTREAM_FRAME_BYTES = 16 * 1024 * 1024 + 128 * 1024;
/** Prelude (total length, headers length, prelude CRC) plus the message CRC. */
const MIN_FRAME_BYTES = 16;
const PRELUDE_LENGTH_BYTES = 4;

export class EventStreamFrameTooLargeError extends Error {
  readonly limit: number;

  constructor(size: number, limit: number) {
    super(`event-stream frame of ${size} bytes exceeds the limit of ${limit}`);
    this.name = 'EventStreamFrameTooLargeError';
    this.limit = limit;
  }
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frameLength(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

function decode(frame: Uint8Array): EventStreamMessage {
  // decode() verifies both CRCs and throws on a corrupt frame.
  const msg = codec.decode(frame);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(msg.headers)) headers[k] = String(v.value);
  return { headers, payload: msg.body };
}

export class EventStreamParser {
  private readonly maxFrameBytes: number;
  /** The length prefix of the next frame, while fewer than 4 of its bytes have arrived. */
  private readonly prelude = new Uint8Array(PRELUDE_LENGTH_BYTES);
  private preludeFill = 0;
  /** The frame being assembled (its announced size), and how much of it has arrived. */
  private frame: Uint8Array | undefined;
  private frameFill = 0;
  private failed = false;

  constructor(options: { maxFrameBytes?: number } = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? MAX_EVENTSTREAM_FRAME_BYTES;
  }

  /** The frames completed by `chunk`. Throws on a corrupt or oversized frame; ignores input after that. */
  push(chunk: Uint8Array): EventStreamMessage[] {
    if (this.failed) return [];
    try {
      return this.consume(chunk);
    } catch (err) {
      this.failed = true;
      this.frame = undefined;
      throw err;
    }
  }

  /** Bytes left over at the end mean a truncated frame. */
  get pendingBytes(): number {
    return this.frame === undefined ? this.preludeFill : this.frameFill;
  }

  private consume(chunk: Uint8Array): EventStreamMessage[] {
    const out: EventStreamMessage[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      if (this.frame === undefined) {
        if (this.preludeFill === 0 && chunk.length - pos >= PRELUDE_LENGTH_BYTES) {
          const total = this.checked(frameLength(chunk, pos));
          if (chunk.length - pos >= total) {
            out.push(decode(chunk.subarray(pos, pos + total)));
            pos += total;
            continue;
          }
          this.frame = new Uint8Array(total);
        } else {
          const n = Math.min(PRELUDE_LENGTH_BYTES - this.preludeFill, chunk.length - pos);
          this.prelude.set(chunk.subarray(pos, pos + n), this.preludeFill);
          this.preludeFill += n;
          pos += n;
          if (this.preludeFill < PRELUDE_LENGTH_BYTES) break;
          this.frame = new Uint8Array(this.checked(frameLength(this.prelude, 0)));
          this.frame.set(this.prelude);
          this.frameFill = PRELUDE_LENGTH_BYTES;
          this.preludeFill = 0;
        }
      }
      const frame = this.frame;
      const n = Math.min(frame.length - this.frameFill, chunk.length - pos);
      frame.set(chunk.subarray(pos, pos + n), this.frameFill);
      this.frameFill += n;
      pos += n;
      if (this.frameFill === frame.length) {
        this.frame = undefined;
        this.frameFill = 0;
        out.push(decode(frame));
      }
    }
    return out;
  }

  private checked(total: number): number {
    if (total > this.maxFrameBytes) throw new EventStreamFrameTooLargeError(total, this.maxFrameBytes);
    if (total < MIN_FRAME_BYTES) throw new Error(`event-stream frame length ${total} is below the minimum of ${MIN_FRAME_BYTES}`);
    return total;
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
