/** Server-sent events, both directions: the gateway's one parser lives in proxy/http/sse.ts. */
export { DEFAULT_MAX_SSE_EVENT_CHARS, formatSSE, SSEEventTooLargeError, SSEParser, type SSEEvent, type SSEParserOptions } from '../../../http/sse.ts';

/**
 * One SSE event whose data is JSON text from JSON.stringify (no indent), which never holds a raw
 * CR or LF: it is a single `data:` line, so the per-line split formatSSE does for arbitrary text is
 * skipped. Same bytes as `formatSSE(json, event)`.
 */
export function jsonSSE(json: string, event?: string): string {
  return event === undefined ? `data: ${json}\n\n` : `event: ${event}\ndata: ${json}\n\n`;
}
