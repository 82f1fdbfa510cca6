/**
 * Fuzz target for the SSE parser (src/proxy/http/sse.ts), which reads upstream streams (LLM
 * providers, MCP targets) chunk by chunk as TCP delivers them. The bytes are parsed whole, one
 * byte at a time and in chunks cut at points derived from the input, with the default limit and
 * with a small one. Returns for any input; throws only on a defect: an exception other than the
 * documented SSEEventTooLargeError, a chunking that changes the events or whether the limit hit,
 * or an event larger than the limit.
 */
import { SSEEventTooLargeError, SSEParser, type SSEEvent } from '../src/proxy/http/sse.ts';

/** Small enough that random inputs reach it often. */
const SMALL_LIMIT = 64;

interface Outcome {
  readonly events: readonly SSEEvent[];
  readonly tooLarge: boolean;
}

export function fuzz(data: Buffer): void {
  for (const limit of [undefined, SMALL_LIMIT]) {
    const whole = parse([data], limit);
    const chunkings = [bytewise(data), cutByInput(data)];
    for (const chunks of chunkings) {
      const other = parse(chunks, limit);
      if (!same(whole, other)) throw new Error(`chunking changed the result (limit ${limit}): ${JSON.stringify(whole)} vs ${JSON.stringify(other)}`);
    }
    if (limit !== undefined) {
      for (const e of whole.events) {
        if (e.data.length + (e.event?.length ?? 0) > limit) throw new Error(`an event of ${e.data.length} characters passed the limit of ${limit}`);
      }
    }
  }
}

function parse(chunks: readonly Uint8Array[], limit: number | undefined): Outcome {
  const parser = new SSEParser(limit === undefined ? {} : { maxEventChars: limit });
  const events: SSEEvent[] = [];
  try {
    for (const chunk of chunks) events.push(...parser.push(chunk));
    events.push(...parser.end());
  } catch (err) {
    if (!(err instanceof SSEEventTooLargeError)) throw err;
    events.push(...err.events);
    if (parser.push(new Uint8Array([10, 10])).length !== 0) throw new Error('the parser kept parsing after the limit', { cause: err });
    return { events, tooLarge: true };
  }
  return { events, tooLarge: false };
}

function bytewise(data: Buffer): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < data.length; i++) chunks.push(data.subarray(i, i + 1));
  return chunks;
}

/** Cuts whose lengths come from the input itself (1–16 bytes), so the fuzzer steers them too. */
function cutByInput(data: Buffer): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (let i = 0; at < data.length; i++) {
    const size = 1 + (data[i % data.length]! % 16);
    chunks.push(data.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

function same(a: Outcome, b: Outcome): boolean {
  if (a.tooLarge !== b.tooLarge || a.events.length !== b.events.length) return false;
  return a.events.every((e, i) => e.data === b.events[i]!.data && e.event === b.events[i]!.event);
}
