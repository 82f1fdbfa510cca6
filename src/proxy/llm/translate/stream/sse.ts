/** Server-sent events, both directions: the gateway's one parser lives in proxy/http/sse.ts. */
export { DEFAULT_MAX_SSE_EVENT_CHARS, formatSSE, SSEEventTooLargeError, SSEParser, type SSEEvent, type SSEParserOptions } from '../../../http/sse.ts';
