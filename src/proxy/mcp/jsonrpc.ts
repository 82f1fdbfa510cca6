/**
 * JSON-RPC 2.0 as MCP uses it: the message shapes, guards and the error codes the gateway
 * answers with. Messages stay plain parsed JSON; only the fields the gateway routes on are typed.
 */

export type JsonRpcId = string | number;
export type Params = Record<string, unknown>;

export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params?: Params;
}

export interface JsonRpcNotification {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: Params;
}

export interface JsonRpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export interface JsonRpcResponse {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId | null;
  readonly result?: Record<string, unknown>;
  readonly error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP: "Resource not found" (spec, resources/read). */
  ResourceNotFound: -32002,
  /** Implementation-defined server error: an upstream target failed. */
  UpstreamFailed: -32000,
} as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** A well-formed single message, or undefined. */
export function asMessage(value: unknown): JsonRpcMessage | undefined {
  if (!isRecord(value) || value.jsonrpc !== '2.0') return undefined;
  if (value.params !== undefined && !isRecord(value.params)) return undefined;
  if (typeof value.method === 'string') {
    if (value.id === undefined) return value as unknown as JsonRpcNotification;
    return isId(value.id) ? (value as unknown as JsonRpcRequest) : undefined;
  }
  if (value.id !== null && !isId(value.id)) return undefined;
  if (isRecord(value.result) || isRecord(value.error)) return value as unknown as JsonRpcResponse;
  return undefined;
}

export function isRequest(m: JsonRpcMessage): m is JsonRpcRequest {
  return 'method' in m && 'id' in m && m.id !== undefined;
}

export function isNotification(m: JsonRpcMessage): m is JsonRpcNotification {
  return 'method' in m && !('id' in m && m.id !== undefined);
}

export function isResponse(m: JsonRpcMessage): m is JsonRpcResponse {
  return !('method' in m);
}

export function resultOf(id: JsonRpcId | null, result: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

export function errorOf(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** Thrown inside the gateway to answer the current request with a JSON-RPC error. */
export class McpError extends Error {
  readonly code: number;
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}
