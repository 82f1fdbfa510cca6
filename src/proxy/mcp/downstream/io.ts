import type { IncomingHttpHeaders } from 'node:http';
import { formatSSE } from '../../llm/stream/sse.ts';
import { asMessage, ErrorCode, errorOf, type JsonRpcMessage } from '../jsonrpc.ts';

/** What the handler needs of an HTTP/1.1 or HTTP/2 request (IncomingMessage, Http2ServerRequest). */
export interface DownstreamRequest extends AsyncIterable<Buffer | string> {
  readonly method?: string;
  readonly url?: string;
  readonly headers: IncomingHttpHeaders;
}

/** What the handler needs of an HTTP/1.1 or HTTP/2 response (ServerResponse, Http2ServerResponse). */
export interface DownstreamResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  writeHead(status: number, headers?: Record<string, string | number>): unknown;
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** Bounds a client's POST body (a JSON-RPC message or batch). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export type ParsedBody =
  | { readonly ok: true; readonly messages: readonly JsonRpcMessage[]; readonly batch: boolean }
  | { readonly ok: false; readonly status: number; readonly code: number; readonly message: string };

export async function readMessages(req: DownstreamRequest): Promise<ParsedBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > MAX_MESSAGE_BYTES) return { ok: false, status: 413, code: ErrorCode.InvalidRequest, message: 'Message too large' };
    chunks.push(buffer);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return { ok: false, status: 400, code: ErrorCode.ParseError, message: 'Parse error' };
  }
  const batch = Array.isArray(parsed);
  const list: unknown[] = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
  if (list.length === 0) return { ok: false, status: 400, code: ErrorCode.InvalidRequest, message: 'Empty batch' };
  const messages: JsonRpcMessage[] = [];
  for (const item of list) {
    const message = asMessage(item);
    if (!message) return { ok: false, status: 400, code: ErrorCode.InvalidRequest, message: 'Invalid JSON-RPC message' };
    messages.push(message);
  }
  return { ok: true, messages, batch };
}

export function sendJson(res: DownstreamResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An HTTP error carrying a JSON-RPC error body, as MCP servers answer transport-level failures. */
export function sendError(res: DownstreamResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, errorOf(null, code, message), headers);
}

export function startEventStream(res: DownstreamResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
}

export function writeEvent(res: DownstreamResponse, message: JsonRpcMessage | readonly JsonRpcMessage[], event = 'message'): void {
  if (!res.writableEnded) res.write(formatSSE(JSON.stringify(message), event));
}

export function accepts(req: DownstreamRequest, type: string): boolean {
  const accept = req.headers.accept;
  return accept === undefined || accept.includes(type) || accept.includes('*/*');
}

/** Comment lines keep idle SSE streams open through intermediaries. */
export const KEEPALIVE_MS = 25_000;

export function keepAlive(res: DownstreamResponse): () => void {
  const timer = setInterval(() => {
    if (!res.writableEnded) res.write(': keepalive\n\n');
  }, KEEPALIVE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
