import { SSEEventTooLargeError, SSEParser } from '../../http/sse.ts';
import { asMessage, type JsonRpcMessage } from '../jsonrpc.ts';

export interface StreamEvent {
  readonly event?: string;
  readonly data: string;
}

/**
 * SSE events of a response body as they arrive, with any chunking. An event past the parser's
 * limit (DEFAULT_MAX_SSE_EVENT_CHARS, 8 MiB) throws SSEEventTooLargeError, and leaving the loop
 * closes the body: the caller's request fails as a protocol error of the target.
 */
export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamEvent> {
  const parser = new SSEParser();
  try {
    for await (const chunk of body) yield* parser.push(chunk);
    yield* parser.end();
  } catch (err) {
    // The events completed before an oversized one still count (the awaited response may be among them).
    if (err instanceof SSEEventTooLargeError) yield* err.events;
    throw err;
  }
}

/** JSON-RPC messages of an SSE `data` (or JSON body) payload: one message or a batch; malformed entries are dropped. */
export function messagesOf(payload: unknown): JsonRpcMessage[] {
  const list = Array.isArray(payload) ? payload : [payload];
  const out: JsonRpcMessage[] = [];
  for (const item of list) {
    const message = asMessage(item);
    if (message !== undefined) out.push(message);
  }
  return out;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
