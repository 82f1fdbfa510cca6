/**
 * OpenTelemetry MCP semantic conventions: the request span of an MCP message gets
 * `mcp.method.name`, the tool, prompt or resource it names and the target serving it; each message
 * sent to a target is a CLIENT span `{mcp.method.name} {tool or prompt name}` with the target's
 * own names, its `traceparent` in the request headers (one span per send: retries separately).
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { McpInput } from '../../../cel/index.ts';
import { requestFacts } from '../request-facts.ts';
import { currentTrace, endCall, type RequestTrace } from './request-trace.ts';
import { UpstreamAttempts } from './upstream.ts';

/** The parts of a JSON-RPC message the conventions name. */
export interface McpMessageView {
  readonly method?: string;
  readonly id?: string | number | null;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** Attributes for a message: method, request id, and the item it names. */
export function mcpAttributes(message: McpMessageView): Attributes {
  const out: Attributes = {};
  const method = message.method;
  if (method === undefined) return out;
  out['mcp.method.name'] = method;
  if (typeof message.id === 'string' || typeof message.id === 'number') out['jsonrpc.request.id'] = String(message.id);
  const params = message.params ?? {};
  const name = typeof params.name === 'string' ? params.name : undefined;
  if (method === 'tools/call' && name !== undefined) {
    out['gen_ai.tool.name'] = name;
    out['gen_ai.operation.name'] = 'execute_tool';
  } else if (method === 'prompts/get' && name !== undefined) out['gen_ai.prompt.name'] = name;
  else if (method.startsWith('resources/') && typeof params.uri === 'string') out['mcp.resource.uri'] = params.uri;
  return out;
}

/** A request whose facts are read (traced, or an access log with CEL) learns which MCP message it carries and where it goes. */
export function noteMcpRequest(message: McpMessageView, target: string): void {
  const facts = requestFacts();
  if (facts === undefined) return;
  facts.noteMcp(mcpCel(message, target));
  const requestTrace = currentTrace();
  if (requestTrace === undefined) return;
  const attributes = mcpAttributes(message);
  if (target !== '') attributes['switchboard.mcp.target'] = target;
  requestTrace.set(attributes);
}

/** Spans of one message sent to a target, when the request is traced; undefined otherwise. */
export function mcpTargetCalls(message: McpMessageView, target: string, address: string): UpstreamAttempts | undefined {
  const requestTrace = currentTrace();
  if (requestTrace === undefined) return undefined;
  const attributes = mcpAttributes(message);
  const item = attributes['gen_ai.tool.name'] ?? attributes['gen_ai.prompt.name'];
  attributes['switchboard.mcp.target'] = target;
  attributes['url.full'] = address;
  const name = message.method === undefined ? 'mcp' : item === undefined ? message.method : `${message.method} ${String(item)}`;
  return new UpstreamAttempts(requestTrace, name, attributes);
}

/** The name of a target's server-stream span: one constant (span names stay low-cardinality; the target is an attribute). */
export const MCP_SERVER_STREAM = 'mcp_server_stream';

/**
 * A target's server stream relayed to a client (the Streamable HTTP GET; a legacy HTTP+SSE
 * session's target streams): a CLIENT span from its start to the stream's end, counting the
 * messages it carried; its `traceparent` goes on the GET where the stream starts with one. The
 * stream may outlive the request that started it (legacy: the `initialize` POST), so the span
 * holds its tracer provider until it ends (RequestTrace.hold).
 */
export class McpServerStreamSpan {
  /** The span's trace context, for the GET's headers. */
  readonly headers: Record<string, string> = {};
  readonly #span: Span;
  readonly #release: () => void;
  #messages = 0;

  constructor(requestTrace: RequestTrace, attributes: Attributes) {
    this.#span = requestTrace.startCall(MCP_SERVER_STREAM, attributes, this.headers);
    this.#release = requestTrace.hold();
  }

  /** One message of the target reached the client. */
  message(): void {
    this.#messages++;
  }

  /** The stream ended: closed by either side, or failed; `offered: false` when the target has no server stream (405). */
  end(outcome: { error?: unknown; offered?: boolean }): void {
    if (outcome.offered === false) this.#span.setAttribute('switchboard.mcp.stream_offered', false);
    this.#span.setAttribute('switchboard.mcp.messages', this.#messages);
    endCall(this.#span, outcome);
    this.#release();
  }
}

/** The span of one target's server stream when the request is traced; undefined (nothing made) otherwise. */
export function mcpServerStreamSpan(target: string, sessionId: string): McpServerStreamSpan | undefined {
  const requestTrace = currentTrace();
  if (requestTrace === undefined) return undefined;
  return new McpServerStreamSpan(requestTrace, { 'switchboard.mcp.target': target, 'mcp.session.id': sessionId });
}

function mcpCel(message: McpMessageView, target: string): McpInput {
  const params = message.params ?? {};
  const name = typeof params.name === 'string' ? params.name : undefined;
  const item = name === undefined ? undefined : { name, ...(target !== '' ? { target } : {}) };
  return {
    ...(message.method !== undefined ? { method: message.method } : {}),
    ...(target !== '' ? { target } : {}),
    ...(message.method === 'tools/call' && item ? { tool: item } : {}),
    ...(message.method === 'prompts/get' && item ? { prompt: item } : {}),
    ...(message.method?.startsWith('resources/') === true && typeof params.uri === 'string' ? { resource: { name: params.uri, ...(target !== '' ? { target } : {}) } } : {}),
  };
}
