import type { IncomingHttpHeaders } from 'node:http';
import { BodyTooLargeError, readBodyBounded } from '../../http/body.ts';
import { formatSSE } from '../../http/sse.ts';
import { errorOf, type JsonRpcMessage } from '../jsonrpc.ts';
import { MAX_MESSAGE_BYTES, parseMessages, TOO_LARGE, type ParsedBody } from './parse.ts';

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
  /** Marks the next head as the gateway's own error, not an answer: response filters skip it (pipeline/handler-response.ts). */
  gatewayAnswer?(): void;
}

export { MAX_MESSAGE_BYTES, type ParsedBody } from './parse.ts';

/** The client's body, read under MAX_MESSAGE_BYTES, as JSON-RPC messages (see parse.ts for the bounds). */
export async function readMessages(req: DownstreamRequest): Promise<ParsedBody> {
  let body: Buffer;
  try {
    // Not destroyed past the cap: the client is about to read its 413.
    body = await readBodyBounded(req, MAX_MESSAGE_BYTES, { what: 'MCP message', destroy: false });
  } catch (error) {
    if (error instanceof BodyTooLargeError) return TOO_LARGE;
    throw error;
  }
  return parseMessages(body);
}

export function sendJson(res: DownstreamResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An HTTP error carrying a JSON-RPC error body, as MCP servers answer transport-level failures. */
export function sendError(res: DownstreamResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (!res.headersSent) res.gatewayAnswer?.();
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
