import type { Dispatcher } from 'undici';
import type { PolicyContext } from '../../policies/context.ts';
import { applyHeaderChanges, type HeaderChanges } from '../../policies/backend/policy-headers.ts';
import { BodyTooLargeError } from '../../http/body.ts';
import { jsonRpcGatewayError } from '../../http/error-format.ts';
import { SSEEventTooLargeError } from '../../http/sse.ts';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../jsonrpc.ts';
import type { RetryPolicy } from '../../policies/context.ts';
import type { Prepared, TargetAccess, UpstreamHeaders } from './policy.ts';
import { mcpCall } from '../../policies/backend/cloud-auth.ts';
import type { OutcomeRecorder } from './retry.ts';
import type { AnswerHeaders, LegGate } from './target-gate.ts';

/** Receives every message of a target that is not the awaited response: progress, logging, server-to-client requests. */
export type MessageSink = (message: JsonRpcMessage) => void;

/** Where a client sends a target's requests. */
export interface UpstreamAddress {
  /** undici origin connected to: the pinned endpoint's, else the target's host and port. */
  readonly origin: string;
  /** The pinned endpoint (`host:port`, IPv6 bracketed); absent when the target's host is used. */
  readonly endpoint?: string;
  /** Host header for an endpoint: the target's own `host:port`, as when it is reached by name. */
  readonly host?: string;
}

/** How a client reaches its target: the pool to use, where, and the target's backend policy. */
export interface UpstreamLink {
  /** The pool for the target's connection settings (kept across requests). */
  readonly dispatcher: Dispatcher;
  readonly address: UpstreamAddress;
  readonly access: TargetAccess;
  /** The policy context of the request that made the client (passthrough token, token exchange). */
  readonly policy: PolicyContext | undefined;
  /** Headers the request's filters and policies set or removed (policy-headers.ts); absent: none. */
  readonly headers?: HeaderChanges;
  /** The request's traffic `retry` for message POSTs (retry.ts); absent: none. */
  readonly retry?: RetryPolicy;
  /** Passive health of the endpoint this client talks to (backend `health`, target-health.ts); absent: not tracked. */
  readonly health?: EndpointHealthView;
  /** The target's own request steps, run on each message sent to it (target-gate.ts); absent: it has none. */
  readonly gate?: LegGate;
}

/** One target endpoint's passive health, as a client sees it. */
export interface EndpointHealthView {
  /** Feeds an attempt's outcome (its status; 503/502 for transport failures). */
  readonly record: OutcomeRecorder;
  /** True while the endpoint is evicted: calls fail with an `evicted` UpstreamError, nothing is sent. */
  evicted(): boolean;
}

/** The MCP session and framing headers stay the gateway's own: the target's session is not the client's. */
const GATEWAY_MCP_HEADERS: ReadonlySet<string> = new Set(['mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'accept', 'content-type']);

/**
 * The headers and path of one upstream request with the policy-set headers and the target's
 * credentials written in. `method`, `origin` and `body` are what cloud credentials sign (the Host
 * is the `host` header when one is set, else the origin's).
 */
export function prepareRequest(link: UpstreamLink, headers: UpstreamHeaders, path: string, method: string, origin: string, body: string | undefined, leg?: HeaderChanges): Prepared | Promise<Prepared> {
  // Policy-set headers first (the request's, then the target's own steps'): the credentials the target's policy writes win over them.
  if (link.headers !== undefined && link.headers.size > 0) applyHeaderChanges(headers, link.headers, GATEWAY_MCP_HEADERS);
  if (leg !== undefined && leg.size > 0) applyHeaderChanges(headers, leg, GATEWAY_MCP_HEADERS);
  return link.access.prepare(headers, path, link.policy, link.access.needsCall ? mcpCall(headers, method, origin, body) : undefined);
}

/**
 * One upstream MCP session with one target, whatever its transport. The multiplexer speaks
 * only this interface; ids are passed through untouched (the caller owns id spaces).
 */
export interface UpstreamClient {
  /** The target's session id (Streamable HTTP), set by a successful `initialize`. */
  readonly sessionId: string | undefined;
  /** The endpoint (`host:port`) this session lives on; undefined when the target is reached by its host. */
  readonly endpoint: string | undefined;
  /** The protocol version sent in `mcp-protocol-version` once negotiated. */
  protocolVersion: string | undefined;
  /** `onAnswerHeaders`: given when the client's answer is this request's alone, to take the target's own response header changes (target-gate.ts). */
  request(message: JsonRpcRequest, onMessage: MessageSink, signal?: AbortSignal, onAnswerHeaders?: AnswerHeaders): Promise<JsonRpcResponse>;
  /** A notification, or the client's answer to a server-to-client request. */
  send(message: JsonRpcNotification | JsonRpcResponse, signal?: AbortSignal): Promise<void>;
  /** Streams server-initiated messages until `signal` aborts; false when the target offers no such stream. `traceHeaders`: the stream span's trace context. */
  listen(onMessage: MessageSink, signal: AbortSignal, traceHeaders?: Readonly<Record<string, string>>): Promise<boolean>;
  /** Ends the upstream session (DELETE for Streamable HTTP, closing the stream for SSE). */
  close(): Promise<void>;
}

/**
 * `session_expired`: the target no longer knows the session (404); `evicted`: backend `health`
 * evicted the target's endpoint, nothing was sent (skipped by lists and fan-outs, a call gets 503 `no_healthy_upstream`).
 */
export type UpstreamFailure = 'unavailable' | 'session_expired' | 'protocol' | 'evicted' | 'refused';

/** Why talking to a target failed. */
export class UpstreamError extends Error {
  readonly target: string;
  readonly failure: UpstreamFailure;
  /**
   * `refused`: the target's own backend policy (extAuth, transformation) answered instead, nothing
   * was sent; a call gets this status and docs/errors.md code as its JSON-RPC error's data, a
   * fan-out leaves the target out as an unavailable one.
   */
  readonly refusal: { readonly status: number; readonly code: string } | undefined;

  constructor(target: string, failure: UpstreamFailure, message: string, refusal?: { status: number; code: string }) {
    super(message);
    this.target = target;
    this.failure = failure;
    this.refusal = refusal;
  }
}

/** The JSON-RPC error of a call its target's backend policy refused: data `{status, code}` (docs/errors.md). */
export function refusedError(failure: UpstreamError): { code: number; message: string; data: { status: number; code: string } } {
  const refusal = failure.refusal ?? { status: 403, code: 'forbidden' };
  return jsonRpcGatewayError(refusal.status, { code: refusal.code, message: failure.message });
}

/** The JSON-RPC error of a call to a target backend `health` evicted: data `{status: 503, code: no_healthy_upstream}` (docs/errors.md). */
export function evictedError(failure: UpstreamError): { code: number; message: string; data: { status: number; code: string } } {
  return jsonRpcGatewayError(503, { code: 'no_healthy_upstream', message: failure.message });
}

export function asUpstreamError(target: string, error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  // A target whose answer or stream event passes the gateway's size limits is misbehaving, not down.
  if (error instanceof BodyTooLargeError || error instanceof SSEEventTooLargeError) return new UpstreamError(target, 'protocol', error.message);
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamError(target, 'unavailable', message);
}

/**
 * A target that cannot be reached under its backend policy: every call fails as an unavailable
 * target does (FailClosed fails the session, FailOpen skips it), nothing is sent. With failure
 * `evicted`: a target whose endpoint backend `health` evicted.
 */
export class FailedClient implements UpstreamClient {
  readonly sessionId: string | undefined;
  readonly endpoint: string | undefined;
  protocolVersion: string | undefined;
  readonly #error: UpstreamError;

  constructor(target: string, reason: string, session?: { sid?: string; pv?: string; ep?: string }, failure: UpstreamFailure = 'unavailable') {
    this.#error = new UpstreamError(target, failure, reason);
    this.sessionId = session?.sid;
    this.protocolVersion = session?.pv;
    this.endpoint = session?.ep;
  }

  request(): Promise<JsonRpcResponse> {
    return Promise.reject(this.#error);
  }

  send(): Promise<void> {
    return Promise.reject(this.#error);
  }

  listen(): Promise<boolean> {
    return Promise.reject(this.#error);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
