import type { Dispatcher } from 'undici';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import { readBodyPrefix, readTextBounded } from '../../http/body.ts';
import { isResponse, type JsonRpcId, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc.ts';
import { UpstreamError, asUpstreamError, prepareRequest, type MessageSink, type UpstreamClient, type UpstreamFailure, type UpstreamLink } from './client.ts';
import { mcpTargetCalls } from '../../telemetry/tracing/mcp.ts';
import { callDeadline } from './deadline.ts';
import type { HeaderChanges } from '../../policies/backend/policy-headers.ts';
import { answered, legFor, reportAnswerHeaders, type AnswerHeaders, type LegChanges } from './target-gate.ts';
import { sendWithRetry } from './retry.ts';
import { messagesOf, parseJson, sseEvents } from './stream.ts';

const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';
/** Bounds a JSON (non-streamed) answer (past it: a protocol error); streamed answers are bounded per event by the SSE parser. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** How much of an error answer is read, to quote its start in the error. */
const MAX_ERROR_DETAIL_BYTES = 4 * 1024;

type ResponseData = Dispatcher.ResponseData;

/** Streamable HTTP (MCP 2025-03-26 and later): every message is a POST; answers are JSON or an SSE stream. */
export class StreamableHttpClient implements UpstreamClient {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  readonly endpoint: string | undefined;
  readonly #target: McpTargetIR;
  readonly #link: UpstreamLink;
  readonly #host: string | undefined;

  constructor(target: McpTargetIR, link: UpstreamLink, session?: { sid?: string; pv?: string }) {
    this.#target = target;
    this.#link = link;
    this.#host = link.address.host;
    this.endpoint = link.address.endpoint;
    this.sessionId = session?.sid;
    this.protocolVersion = session?.pv;
  }

  /** One request and its response; backend `http.requestTimeout` bounds the whole exchange (deadline.ts). */
  async request(message: JsonRpcRequest, onMessage: MessageSink, signal?: AbortSignal, onAnswerHeaders?: AnswerHeaders): Promise<JsonRpcResponse> {
    this.#refuseIfEvicted();
    const deadline = callDeadline(this.#target.name, this.#link.access.timeoutMs, signal);
    try {
      // The target's own extAuth/transformation on this message (a refusal throws: nothing is sent); no hop without any.
      if (this.#link.gate === undefined) return await this.#exchange(message, onMessage, deadline.signal, undefined);
      const leg = await legFor(this.#link.gate, this.#target.name, message);
      reportAnswerHeaders(leg, onAnswerHeaders);
      return answered(leg, await this.#exchange(message, onMessage, deadline.signal, leg));
    } catch (error) {
      throw deadline.explain(error);
    }
  }

  async send(message: JsonRpcNotification | JsonRpcResponse, signal?: AbortSignal): Promise<void> {
    this.#refuseIfEvicted();
    const deadline = callDeadline(this.#target.name, this.#link.access.timeoutMs, signal);
    try {
      const response = await this.#post(message, deadline.signal, this.#link.gate === undefined ? undefined : await legFor(this.#link.gate, this.#target.name, message));
      await response.body.dump();
    } catch (error) {
      throw deadline.explain(error);
    }
  }

  async #exchange(message: JsonRpcRequest, onMessage: MessageSink, signal: AbortSignal | undefined, leg: LegChanges | undefined): Promise<JsonRpcResponse> {
    const response = await this.#post(message, signal, leg);
    const sid = response.headers[SESSION_HEADER];
    if (message.method === 'initialize' && typeof sid === 'string' && sid !== '') this.sessionId = sid;
    const type = String(response.headers['content-type'] ?? '');
    if (type.startsWith('text/event-stream')) return this.#fromStream(response, message.id, onMessage);
    if (type.startsWith('application/json')) {
      let text: string;
      try {
        text = await readTextBounded(response.body, MAX_JSON_BYTES, { what: 'JSON answer' });
      } catch (error) {
        throw asUpstreamError(this.#target.name, error);
      }
      const found = this.#pick(messagesOf(parseJson(text)), message.id, onMessage);
      if (found) return found;
      throw this.#error('protocol', `no response to request ${String(message.id)} in the JSON body`);
    }
    await response.body.dump();
    throw this.#error('protocol', `unexpected content-type "${type}" (status ${response.statusCode})`);
  }

  async listen(onMessage: MessageSink, signal: AbortSignal, traceHeaders?: Readonly<Record<string, string>>): Promise<boolean> {
    let response: ResponseData;
    // The GET stream carries the target's messages to the client: its own steps decide it too (no body).
    const leg = this.#link.gate === undefined ? undefined : await this.#link.gate(this.#target.name, undefined);
    try {
      const headers = this.#headers('text/event-stream');
      if (traceHeaders !== undefined) Object.assign(headers, traceHeaders);
      response = await this.#dispatch('GET', headers, undefined, signal, leg?.headers);
    } catch (error) {
      if (signal.aborted) return true;
      throw asUpstreamError(this.#target.name, error);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const detail = (await readBodyPrefix(response.body, MAX_ERROR_DETAIL_BYTES)).slice(0, 200);
      if (this.#sessionRejected(response.statusCode, detail)) throw this.#error('session_expired', 'the target no longer knows the session');
      if (response.statusCode === 405) return false;
      throw this.#error('unavailable', `GET stream answered ${response.statusCode}`);
    }
    try {
      for await (const event of sseEvents(response.body)) {
        for (const m of messagesOf(parseJson(event.data))) onMessage(m);
      }
    } catch (error) {
      if (!signal.aborted) throw asUpstreamError(this.#target.name, error);
    }
    return true;
  }

  async close(): Promise<void> {
    if (this.sessionId === undefined) return;
    try {
      const response = await this.#dispatch('DELETE', this.#headers('application/json'), undefined, undefined);
      await response.body.dump();
    } catch {
      // The session ends anyway when the target expires it; a failed DELETE changes nothing for the client.
    }
  }

  /** Backend `health` evicted this session's endpoint: nothing is sent (docs/mcp.md "Health"). */
  #refuseIfEvicted(): void {
    if (this.#link.health?.evicted() === true) throw this.#error('evicted', `MCP target "${this.#target.name}" is evicted by its backend health policy`);
  }

  /** One message POSTed, sent again under the request's traffic `retry` where that is safe (retry.ts). */
  async #post(message: JsonRpcMessage, signal: AbortSignal | undefined, leg: LegChanges | undefined): Promise<ResponseData> {
    let response: ResponseData;
    const body = leg?.body ?? JSON.stringify(message);
    // Traced requests only: a CLIENT span per send, its traceparent in the headers (telemetry/tracing/mcp.ts).
    const calls = mcpTargetCalls(message, this.#target.name, this.#link.address.origin);
    try {
      response = await sendWithRetry(
        () => {
          const headers = { ...this.#headers('application/json, text/event-stream'), 'content-type': 'application/json' };
          calls?.begin(headers);
          return this.#dispatch('POST', headers, body, signal, leg?.headers);
        },
        this.#link.retry, signal, this.#link.health?.record,
      );
    } catch (error) {
      calls?.end({ error });
      throw asUpstreamError(this.#target.name, error);
    }
    calls?.end({ status: response.statusCode });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const detail = (await readBodyPrefix(response.body, MAX_ERROR_DETAIL_BYTES)).slice(0, 200);
      if (this.#sessionRejected(response.statusCode, detail)) throw this.#error('session_expired', 'the target no longer knows the session');
      throw this.#error('unavailable', `answered HTTP ${response.statusCode}${detail ? `: ${detail}` : ''}`);
    }
    return response;
  }

  /**
   * One request to the target's endpoint with its credentials written in. Bodies are not timed
   * (streams and long tool calls): a message's exchange is bounded by its deadline signal, and
   * `http.requestTimeout` also bounds the wait for the GET stream or DELETE answer to start.
   */
  async #dispatch(method: 'GET' | 'POST' | 'DELETE', headers: Record<string, string>, body: string | undefined, signal: AbortSignal | undefined, leg?: HeaderChanges): Promise<ResponseData> {
    const prepared = await prepareRequest(this.#link, headers, this.#target.path, method, this.#link.address.origin, body, leg);
    const timeout = this.#link.access.timeoutMs;
    return this.#link.dispatcher.request({
      origin: this.#link.address.origin, path: prepared.path, method, headers: prepared.headers, body, signal, bodyTimeout: 0,
      ...(timeout !== undefined ? { headersTimeout: timeout } : {}),
    });
  }

  /**
   * MCP says an unknown session gets 404. Servers built on the SDK's examples (server-everything
   * among them) answer 400 "No valid session ID provided" instead; both mean: initialize again.
   */
  #sessionRejected(status: number, body: string): boolean {
    if (this.sessionId === undefined) return false;
    return status === 404 || (status === 400 && /session/i.test(body));
  }

  #headers(accept: string): Record<string, string> {
    const headers: Record<string, string> = { accept };
    if (this.#host !== undefined) headers.host = this.#host;
    if (this.sessionId !== undefined) headers[SESSION_HEADER] = this.sessionId;
    if (this.protocolVersion !== undefined) headers[VERSION_HEADER] = this.protocolVersion;
    return headers;
  }

  async #fromStream(response: ResponseData, id: JsonRpcId, onMessage: MessageSink): Promise<JsonRpcResponse> {
    try {
      for await (const event of sseEvents(response.body)) {
        const found = this.#pick(messagesOf(parseJson(event.data)), id, onMessage);
        if (found) {
          // The server closes the stream after the response; stop reading in case it does not.
          response.body.destroy();
          return found;
        }
      }
    } catch (error) {
      throw asUpstreamError(this.#target.name, error);
    }
    throw this.#error('unavailable', `stream ended before the response to request ${String(id)}`);
  }

  #pick(messages: readonly JsonRpcMessage[], id: JsonRpcId, onMessage: MessageSink): JsonRpcResponse | undefined {
    let found: JsonRpcResponse | undefined;
    for (const m of messages) {
      if (isResponse(m) && m.id === id) found = m;
      else onMessage(m);
    }
    return found;
  }

  #error(failure: UpstreamFailure, message: string): UpstreamError {
    return new UpstreamError(this.#target.name, failure, message);
  }
}
