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
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../http/json-depth.ts';
import { asMessage, ErrorCode, type JsonRpcMessage } from '../jsonrpc.ts';

/** Bounds a client's POST body (a JSON-RPC message or batch). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
export { MAX_JSON_DEPTH };
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
  if (jsonTooDeep(bytes, MAX_JSON_DEPTH)) return refused(400, ErrorCode.InvalidRequest, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
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
