/**
 * Response body effects on MCP answers streamed as SSE (docs/mcp.md "Response effects"). An MCP
 * answer is JSON-RPC: a JSON answer is one message (or a batch) and the pipeline's response
 * filters see it whole; an SSE answer is a sequence of messages, and a POST's stream or a GET
 * server stream may stay open for long. A body transformation there works message by message: each
 * `message` event's data is handed to the filters that can (ResponseFilter.message, transformation
 * `response.body`), the result replaces it. The other filters (ext_proc) see the stream's bytes as
 * the pipeline passes them. Comments (keep-alives) and other events (the legacy `endpoint` event) pass as written.
 */
import type { Logger } from '../../common/logger.ts';
import { formatSSE, SSEParser } from '../http/sse.ts';
import type { FilteredResponse, ResponseFilter } from '../policies/context.ts';
import { jsonRpcGatewayError } from '../http/error-format.ts';

/** Rewrites one SSE chunk as the MCP handler wrote it (one event or a comment per write). */
export type SseChunkRewriter = (chunk: string) => string;

/**
 * Takes the filters that work message by message out of the request's `filters` (so the pipeline
 * does not also run them on the stream's bytes) and returns the rewriter of this answer's SSE
 * chunks, or undefined when there is none.
 */
export function takeMessageFilters(filters: ResponseFilter[], response: FilteredResponse, logger: Logger): SseChunkRewriter | undefined {
  const taken = filters.filter((f) => f.message !== undefined);
  if (taken.length === 0) return undefined;
  for (const f of taken) filters.splice(filters.indexOf(f), 1);
  const rewrite = (data: string): string | undefined => {
    let bytes: Uint8Array = Buffer.from(data);
    try {
      for (const f of taken) bytes = f.message!(bytes, response);
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'MCP: a response transformation failed on a streamed message');
      return failedMessage(data);
    }
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  };
  return (chunk) => {
    if (chunk.startsWith(':')) return chunk;
    const parser = new SSEParser();
    const events = [...parser.push(Buffer.from(chunk)), ...parser.end()];
    let out = '';
    for (const event of events) {
      if (event.event !== undefined && event.event !== 'message') {
        out += formatSSE(event.data, event.event);
        continue;
      }
      const data = rewrite(event.data);
      if (data !== undefined) out += formatSSE(data, event.event);
    }
    return out;
  };
}

/**
 * What replaces a message the transformation failed on: for a response, a JSON-RPC error with its
 * id (data `{status: 500, code: response_processing_failed}`), so the client's request does not
 * hang; any other message is dropped.
 */
function failedMessage(data: string): string | undefined {
  let id: unknown;
  try {
    const parsed = JSON.parse(data) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'id' in parsed && !('method' in parsed)) id = parsed.id;
  } catch {
    return undefined;
  }
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const error = jsonRpcGatewayError(500, { code: 'response_processing_failed', message: 'a response policy failed on this message' });
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}
