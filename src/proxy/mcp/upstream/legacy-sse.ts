import type { Dispatcher } from 'undici';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import { isResponse, type JsonRpcId, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc.ts';
import type { HeaderChanges } from '../../policies/backend/policy-headers.ts';
import { answered, legFor, reportAnswerHeaders, type AnswerHeaders, type LegChanges } from './target-gate.ts';
import { UpstreamError, asUpstreamError, prepareRequest, type MessageSink, type UpstreamClient, type UpstreamLink } from './client.ts';
import { callDeadline } from './deadline.ts';
import { sendWithRetry } from './retry.ts';
import { messagesOf, parseJson, sseEvents } from './stream.ts';
import { mcpTargetCalls } from '../../telemetry/tracing/mcp.ts';

/** How long a target may take to announce its message endpoint. */
const ENDPOINT_TIMEOUT_MS = 10_000;

interface Pending {
  readonly resolve: (response: JsonRpcResponse) => void;
  readonly reject: (error: Error) => void;
  readonly onMessage: MessageSink;
}

/**
 * The legacy HTTP+SSE transport (MCP 2024-11-05): one long GET stream carries every message
 * from the target; the first event (`endpoint`) names the URL the client POSTs to. Responses
 * are matched to requests by id. The stream is this process's, so an SSE upstream session
 * cannot move to another replica: a resumed gateway session opens a new one.
 */
export class LegacySseClient implements UpstreamClient {
  readonly sessionId: string | undefined = undefined;
  protocolVersion: string | undefined;
  readonly endpoint: string | undefined;
  readonly #target: McpTargetIR;
  readonly #link: UpstreamLink;
  readonly #origin: string;
  /** Host header (and the origin a target may name in its endpoint event) when connected to a pinned endpoint. */
  readonly #host: string | undefined;
  readonly #pending = new Map<JsonRpcId, Pending>();
  readonly #abort = new AbortController();
  #endpointPath: string | undefined;
  #listener: MessageSink | undefined;
  #closed: Error | undefined;

  constructor(target: McpTargetIR, link: UpstreamLink) {
    this.#target = target;
    this.#link = link;
    this.#origin = link.address.origin;
    this.#host = link.address.host;
    this.endpoint = link.address.endpoint;
  }

  /** Opens the stream and waits for the endpoint event. */
  async connect(signal?: AbortSignal): Promise<void> {
    const timeout = AbortSignal.timeout(ENDPOINT_TIMEOUT_MS);
    const connectSignal = AbortSignal.any(signal ? [this.#abort.signal, timeout, signal] : [this.#abort.signal, timeout]);
    let response: Dispatcher.ResponseData;
    // The target's own extAuth/transformation decide the stream's opening too (no body).
    const leg = this.#link.gate === undefined ? undefined : await this.#link.gate(this.#target.name, undefined);
    try {
      // Health counts the stream's opening too; a GET stream is not retried (retry.ts).
      response = await sendWithRetry(() => this.#dispatch('GET', this.#target.path, { accept: 'text/event-stream' }, undefined, this.#abort.signal, leg?.headers), undefined, this.#abort.signal, this.#link.health?.record);
    } catch (error) {
      throw asUpstreamError(this.#target.name, error);
    }
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new UpstreamError(this.#target.name, 'unavailable', `SSE stream answered HTTP ${response.statusCode}`);
    }
    const events = sseEvents(response.body);
    const first = await Promise.race([
      events.next(),
      new Promise<never>((_, reject) => connectSignal.addEventListener('abort', () => reject(new Error('no endpoint event in time')), { once: true })),
    ]).catch((error: unknown) => {
      response.body.destroy();
      throw asUpstreamError(this.#target.name, error);
    });
    if (first.done === true || first.value.event !== 'endpoint') {
      response.body.destroy();
      throw new UpstreamError(this.#target.name, 'protocol', 'the SSE stream did not start with an endpoint event');
    }
    const endpoint = new URL(first.value.data.trim(), new URL(this.#target.path, this.#origin));
    if (!this.#sameServer(endpoint)) {
      response.body.destroy();
      throw new UpstreamError(this.#target.name, 'protocol', 'the endpoint event points to another origin');
    }
    this.#endpointPath = endpoint.pathname + endpoint.search;
    void this.#read(events);
  }

  /** One request; backend `http.requestTimeout` bounds it until its response arrives on the stream (deadline.ts). */
  request(message: JsonRpcRequest, onMessage: MessageSink, callerSignal?: AbortSignal, onAnswerHeaders?: AnswerHeaders): Promise<JsonRpcResponse> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (this.#link.health?.evicted() === true) return Promise.reject(this.#evicted());
    const deadline = callDeadline(this.#target.name, this.#link.access.timeoutMs, callerSignal);
    return this.#request(message, onMessage, deadline.signal, onAnswerHeaders).catch((error: unknown) => {
      throw deadline.explain(error);
    });
  }

  #request(message: JsonRpcRequest, onMessage: MessageSink, signal: AbortSignal | undefined, onAnswerHeaders: AnswerHeaders | undefined): Promise<JsonRpcResponse> {
    // The target's own extAuth/transformation on this message (a refusal throws: nothing is sent); no hop without any.
    const gating = legFor(this.#link.gate, this.#target.name, message);
    if (gating === undefined) return this.#sent(message, onMessage, signal, undefined);
    return gating.then(async (leg) => {
      reportAnswerHeaders(leg, onAnswerHeaders);
      return answered(leg, await this.#sent(message, onMessage, signal, leg));
    });
  }

  #sent(message: JsonRpcRequest, onMessage: MessageSink, signal: AbortSignal | undefined, leg: LegChanges | undefined): Promise<JsonRpcResponse> {
    const answer = new Promise<JsonRpcResponse>((resolve, reject) => {
      this.#pending.set(message.id, { resolve, reject, onMessage });
      signal?.addEventListener('abort', () => {
        this.#pending.delete(message.id);
        reject(new UpstreamError(this.#target.name, 'unavailable', 'request aborted'));
      }, { once: true });
    });
    return this.#post(message, signal, leg).then(() => answer, (error: unknown) => {
      this.#pending.delete(message.id);
      throw error;
    });
  }

  send(message: JsonRpcNotification | JsonRpcResponse, callerSignal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (this.#link.health?.evicted() === true) return Promise.reject(this.#evicted());
    const deadline = callDeadline(this.#target.name, this.#link.access.timeoutMs, callerSignal);
    const gating = legFor(this.#link.gate, this.#target.name, message);
    const sent = gating === undefined ? this.#post(message, deadline.signal, undefined) : gating.then((leg) => this.#post(message, deadline.signal, leg));
    return sent.catch((error: unknown) => {
      throw deadline.explain(error);
    });
  }

  listen(onMessage: MessageSink, signal: AbortSignal): Promise<boolean> {
    if (this.#closed) return Promise.reject(this.#closed);
    this.#listener = onMessage;
    return new Promise((resolve) => {
      const done = (): void => {
        if (this.#listener === onMessage) this.#listener = undefined;
        resolve(true);
      };
      if (signal.aborted) done();
      else signal.addEventListener('abort', done, { once: true });
      this.#abort.signal.addEventListener('abort', done, { once: true });
    });
  }

  close(): Promise<void> {
    this.#abort.abort();
    this.#fail(new UpstreamError(this.#target.name, 'unavailable', 'upstream session closed'));
    return Promise.resolve();
  }

  /** Backend `health` evicted this stream's endpoint: nothing is sent (docs/mcp.md "Health"). */
  #evicted(): UpstreamError {
    return new UpstreamError(this.#target.name, 'evicted', `MCP target "${this.#target.name}" is evicted by its backend health policy`);
  }

  /** One message POSTed to the message endpoint, sent again under the request's traffic `retry` where that is safe (retry.ts). */
  async #post(message: JsonRpcMessage, signal: AbortSignal | undefined, leg: LegChanges | undefined): Promise<void> {
    const path = this.#endpointPath;
    if (path === undefined) throw new UpstreamError(this.#target.name, 'protocol', 'not connected');
    let response: Dispatcher.ResponseData;
    const body = leg?.body ?? JSON.stringify(message);
    // Traced requests only: a CLIENT span per send, its traceparent in the headers (telemetry/tracing/mcp.ts).
    const calls = mcpTargetCalls(message, this.#target.name, this.#origin);
    try {
      response = await sendWithRetry(() => {
        const headers = { 'content-type': 'application/json' };
        calls?.begin(headers);
        return this.#dispatch('POST', path, headers, body, signal, leg?.headers);
      }, this.#link.retry, signal, this.#link.health?.record);
    } catch (error) {
      calls?.end({ error });
      throw asUpstreamError(this.#target.name, error);
    }
    calls?.end({ status: response.statusCode });
    await response.body.dump();
    if (response.statusCode === 404) throw new UpstreamError(this.#target.name, 'session_expired', 'the target no longer knows the session');
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw new UpstreamError(this.#target.name, 'unavailable', `message endpoint answered HTTP ${response.statusCode}`);
    }
  }

  /** One request with the target's credentials written in; `http.requestTimeout` also bounds the wait for the answer to start. */
  async #dispatch(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal | undefined, leg?: HeaderChanges): Promise<Dispatcher.ResponseData> {
    const prepared = await prepareRequest(this.#link, this.#headers(headers), path, method, this.#origin, body, leg);
    const timeout = this.#link.access.timeoutMs;
    return this.#link.dispatcher.request({
      origin: this.#origin, path: prepared.path, method, headers: prepared.headers, body, signal,
      ...(method === 'GET' ? { bodyTimeout: 0 } : {}),
      ...(timeout !== undefined ? { headersTimeout: timeout } : {}),
    });
  }

  /**
   * Whether the endpoint event's URL names this server: its origin (normalised, so a default port
   * matches), or — connected to a pinned endpoint — the target's host, which a target that builds
   * absolute URLs from the Host header names.
   */
  #sameServer(url: URL): boolean {
    const connected = new URL(this.#origin);
    if (url.origin === connected.origin) return true;
    return this.#host !== undefined && url.origin === new URL(`${connected.protocol}//${this.#host}`).origin;
  }

  #headers(headers: Record<string, string>): Record<string, string> {
    return this.#host === undefined ? headers : { ...headers, host: this.#host };
  }

  async #read(events: AsyncGenerator<{ event?: string; data: string }>): Promise<void> {
    try {
      for await (const event of events) {
        if (event.event !== undefined && event.event !== 'message') continue;
        for (const m of messagesOf(parseJson(event.data))) this.#deliver(m);
      }
      this.#fail(new UpstreamError(this.#target.name, 'unavailable', 'the SSE stream ended'));
    } catch (error) {
      this.#fail(asUpstreamError(this.#target.name, error));
    }
  }

  #deliver(message: JsonRpcMessage): void {
    if (isResponse(message) && message.id !== null) {
      const pending = this.#pending.get(message.id);
      if (pending) {
        this.#pending.delete(message.id);
        pending.resolve(message);
        return;
      }
    }
    // A server-initiated message: to the newest request in flight (it most likely caused it), else to the listener.
    const newest = [...this.#pending.values()].at(-1);
    (newest?.onMessage ?? this.#listener)?.(message);
  }

  #fail(error: UpstreamError): void {
    this.#closed ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    this.#abort.abort();
  }
}
