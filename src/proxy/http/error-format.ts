/**
 * The wire formats a gateway-made error is rendered in (docs/errors.md). Which one a request gets
 * is decided at config time per route rule × backend (backends/client-format.ts): OpenAI's error
 * object on OpenAI-style AI routes, Anthropic's on Messages/TokenCount, a JSON-RPC error for MCP,
 * the gateway's own JSON everywhere else. Both the pipeline and the LLM gateway render through
 * here, so the two never drift.
 */

export type ClientFormat = 'gateway' | 'openai' | 'anthropic' | 'jsonrpc';

/** A gateway error's machine-readable cause: the `code` of docs/errors.md and a message for people. */
export interface GatewayError {
  readonly code: string;
  readonly message: string;
}

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function anthropicErrorType(status: number): AnthropicErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529 || status === 503) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * JSON-RPC error codes for gateway answers to MCP clients. -32000…-32099 is the range JSON-RPC 2.0
 * leaves to servers; the HTTP status and the gateway code travel in `data` as well.
 */
export function jsonRpcErrorCode(status: number): number {
  if (status === 400 || status === 413) return -32600; // Invalid Request
  if (status >= 500) return -32603; // Internal error
  return -32001; // refused by the gateway (auth, rate limit, authorization …)
}

/** The `error` member of a JSON-RPC answer carrying a gateway error (for answers that keep the request's id). */
export function jsonRpcGatewayError(status: number, error: GatewayError): { code: number; message: string; data: { status: number; code: string } } {
  return { code: jsonRpcErrorCode(status), message: error.message, data: { status, code: error.code } };
}

/** The body of a gateway error in the client's format; the status and headers stay as they are. */
export function renderGatewayError(status: number, error: GatewayError, format: ClientFormat): string {
  switch (format) {
    case 'gateway':
      return JSON.stringify({ error: { code: error.code, message: error.message } });
    case 'openai':
      return JSON.stringify({ error: { message: error.message, type: openAIErrorType(status), param: null, code: error.code } });
    case 'anthropic':
      return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message: error.message } });
    case 'jsonrpc':
      return JSON.stringify({ jsonrpc: '2.0', id: null, error: jsonRpcGatewayError(status, error) });
  }
}
