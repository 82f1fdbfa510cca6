/**
 * A client's POST body as JSON-RPC messages, under the bounds the gateway documents:
 *
 * - MAX_MESSAGE_BYTES: the body (4 MiB) — larger: HTTP 413, JSON-RPC error -32600;
 * - MAX_JSON_DEPTH: nesting of arrays/objects (128) — deeper: HTTP 400, -32600 (a deeper
 *   document would overflow the stack of the recursive walks that rewrite params and results);
 * - MAX_BATCH_LENGTH: messages in one batch (100) — more: HTTP 400, -32600.
 *
 * Not JSON: HTTP 400, -32700 (parse error); JSON that is not a message: HTTP 400, -32600. Never
 * throws, whatever the bytes (fuzz/mcp-jsonrpc.fuzz.ts holds it to that).
 */
import { asMessage, ErrorCode, type JsonRpcMessage } from '../jsonrpc.ts';

/** Bounds a client's POST body (a JSON-RPC message or batch). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
export const MAX_JSON_DEPTH = 128;
export const MAX_BATCH_LENGTH = 100;

export type ParsedBody =
  | { readonly ok: true; readonly messages: readonly JsonRpcMessage[]; readonly batch: boolean }
  | { readonly ok: false; readonly status: number; readonly code: number; readonly message: string };

function refused(status: number, code: number, message: string): ParsedBody {
  return { ok: false, status, code, message };
}

export const TOO_LARGE: ParsedBody = refused(413, ErrorCode.InvalidRequest, 'Message too large');

export function parseMessages(bytes: Uint8Array): ParsedBody {
  if (bytes.length > MAX_MESSAGE_BYTES) return TOO_LARGE;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (nestingExceeds(text, MAX_JSON_DEPTH)) return refused(400, ErrorCode.InvalidRequest, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refused(400, ErrorCode.ParseError, 'Parse error');
  }
  const batch = Array.isArray(parsed);
  const list: unknown[] = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  if (list.length === 0) return refused(400, ErrorCode.InvalidRequest, 'Empty batch');
  if (list.length > MAX_BATCH_LENGTH) return refused(400, ErrorCode.InvalidRequest, `Batch longer than ${MAX_BATCH_LENGTH} messages`);
  const messages: JsonRpcMessage[] = [];
  for (const item of list) {
    const message = asMessage(item);
    if (!message) return refused(400, ErrorCode.InvalidRequest, 'Invalid JSON-RPC message');
    messages.push(message);
  }
  return { ok: true, messages, batch };
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;

/**
 * Whether the JSON text nests arrays/objects deeper than `max`, in one pass without parsing
 * (strings skipped, escapes honoured). Malformed text gets an answer too; JSON.parse judges it next.
 */
export function nestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
