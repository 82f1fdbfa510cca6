import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../../common/logger.ts';
import type { CelInput } from '../../cel/index.ts';
import type { McpBackendIR } from '../../ir/mcp.ts';
import type { Guardrails } from './guardrails/guardrails.ts';
import type { ItemAuthorizer, McpRequestPolicy } from './request-policy.ts';
import { ErrorCode, McpError, resultOf, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse } from './jsonrpc.ts';
import { findOwners, findUriOwners, listAcross, type ListEnv } from './lists.ts';
import { handlingOf, isListMethod, itemKindOf, type ItemKind } from './methods.ts';
import type { Namer } from './naming.ts';
import { PlainUris } from './plain-uris.ts';
import { decodeServerRequestId, exposeContentUris, toClient } from './rewrite.ts';
import { asUpstreamError, evictedError, refusedError, type UpstreamClient } from './upstream/client.ts';
import type { AnswerHeaders } from './upstream/target-gate.ts';
import { noteMcpRequest } from '../telemetry/tracing/mcp.ts';
import { countMcpCall } from '../telemetry/ai-metrics.ts';

/** One client message being served: the session's joined targets and where to send messages for the client. */
export interface Exchange {
  readonly clients: ReadonlyMap<string, UpstreamClient>;
  readonly sink: (message: JsonRpcMessage) => void;
  readonly context?: CelInput;
  readonly signal?: AbortSignal;
  /** Identifies the session in this process (cancellation routing); undefined when stateless. */
  readonly sessionTag?: string;
  /** The client request's headers (what guardrail processors may see). */
  readonly headers?: IncomingHttpHeaders;
  /** The request's MCP authorization and guardrails (its backend policy's `mcp`); absent: the backend's own. */
  readonly policy?: McpRequestPolicy;
  /**
   * Set by a transport whose HTTP answer carries this one request's response alone: a request
   * routed to one target hands it that target's own response header changes. Never passed to
   * fan-outs (lists, broadcasts, owner lookups): their answer is shared by the targets.
   */
  readonly answerHeaders?: AnswerHeaders;
}

interface Routed {
  readonly target: string;
  readonly client: UpstreamClient;
  readonly params: Record<string, unknown>;
  readonly item?: { readonly kind: ItemKind; readonly name: string };
  /** A resource URI the client gave without a target prefix (routed to the one target, or to the target that lists it). */
  readonly plainUri?: string;
}

/**
 * Serves client messages across targets: routes calls by prefix (or by lookup in prefixMode
 * Never), fans lists out and merges them, routes answers to server-to-client requests back to
 * the target that asked, and routes cancellations to the target running the request.
 */
export class Multiplexer {
  readonly #backend: McpBackendIR;
  readonly #namer: Namer;
  readonly #authorizer: ItemAuthorizer;
  readonly #logger: Logger;
  /** `<sessionTag> <request id>` → target, for requests in flight in this process. */
  readonly #inFlight = new Map<string, string>();
  /** Subscriptions made with unprefixed URIs, so their update notifications keep that form. */
  readonly #plainUris = new PlainUris();

  readonly #guardrails: Guardrails | undefined;

  constructor(backend: McpBackendIR, namer: Namer, authorizer: ItemAuthorizer, logger: Logger, guardrails?: Guardrails) {
    this.#backend = backend;
    this.#guardrails = guardrails?.enabled ? guardrails : undefined;
    this.#namer = namer;
    this.#authorizer = authorizer;
    this.#logger = logger;
  }

  /** The response to a client request (other than initialize). Throws UpstreamError `session_expired` for the transport to answer 404. */
  async request(request: JsonRpcRequest, exchange: Exchange): Promise<JsonRpcResponse> {
    const target = this.#targetOf(request);
    noteMcpRequest(request, target);
    const guardrails = exchange.policy ? exchange.policy.guardrailsFor(target) : this.#guardrails;
    if (!guardrails?.enabled) return this.#answer(request, exchange);
    const message = { request, target, headers: exchange.headers ?? {}, context: exchange.context };
    const admitted = await guardrails.onRequest(message);
    if ('response' in admitted) return admitted.response;
    const response = await this.#answer(admitted.request, exchange);
    return guardrails.onResponse({ ...message, request: admitted.request }, response);
  }

  /**
   * A target's message as the client of session `sessionTag` must see it (server-request ids
   * wrapped, `resources/updated` URIs in the form the client subscribed with).
   */
  toClient(target: string, message: JsonRpcMessage, sessionTag: string | undefined): JsonRpcMessage {
    return toClient(target, message, this.#namer, (t, uri) => this.#plainUris.has(sessionTag, t, uri));
  }

  /** The session ended: forget what was recorded for it. */
  forget(sessionTag: string): void {
    this.#plainUris.drop(sessionTag);
  }

  /** Which target an item-routed request goes to, for guardrails ('' for fan-out or unknown). */
  #targetOf(request: JsonRpcRequest): string {
    const params = request.params ?? {};
    const kind = itemKindOf(request.method);
    const single = this.#backend.targets.length === 1 ? this.#backend.targets[0].name : '';
    if (kind === 'resource' && typeof params.uri === 'string') return this.#namer.routeUri(params.uri)?.target ?? single;
    if ((kind === 'tool' || kind === 'prompt') && typeof params.name === 'string' && this.#namer.prefixNames) return this.#namer.routeName(params.name)?.target ?? '';
    return single;
  }

  async #answer(request: JsonRpcRequest, exchange: Exchange): Promise<JsonRpcResponse> {
    try {
      return await this.#request(request, exchange);
    } catch (error) {
      if (error instanceof McpError) return { jsonrpc: '2.0', id: request.id, error: error.data === undefined ? { code: error.code, message: error.message } : { code: error.code, message: error.message, data: error.data } };
      const failure = asUpstreamError('?', error);
      if (failure.failure === 'session_expired') throw failure;
      if (failure.failure === 'evicted') return { jsonrpc: '2.0', id: request.id, error: evictedError(failure) };
      // The target's own extAuth or transformation answered instead of the target: the client learns why.
      if (failure.failure === 'refused') return { jsonrpc: '2.0', id: request.id, error: refusedError(failure) };
      this.#logger.warn({ target: failure.target, method: request.method, error: failure.message }, 'MCP target failed');
      return { jsonrpc: '2.0', id: request.id, error: { code: ErrorCode.UpstreamFailed, message: `MCP target "${failure.target}" failed` } };
    }
  }

  async #request(request: JsonRpcRequest, exchange: Exchange): Promise<JsonRpcResponse> {
    const method = request.method;
    switch (handlingOf(method)) {
      case 'local':
        return resultOf(request.id, {});
      case 'list':
        if (!isListMethod(method)) break;
        return resultOf(request.id, await listAcross(method, request, exchange.clients, this.#listEnv(exchange)));
      case 'broadcast':
        await this.#broadcastRequest(request, exchange);
        return resultOf(request.id, {});
      case 'byName':
      case 'byUri':
      case 'byRef':
      case 'single':
        return this.#forward(request, await this.#route(request, exchange), exchange);
      case 'initialize':
        throw new McpError(ErrorCode.InvalidRequest, 'The session is already initialized');
      case 'swallow':
      case 'cancel':
        break;
    }
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  }

  /** A client notification. Failures are logged: a notification has nobody to answer. */
  async notify(notification: JsonRpcNotification, exchange: Exchange): Promise<void> {
    const handling = handlingOf(notification.method);
    if (handling === 'swallow') return;
    let targets = [...exchange.clients.keys()];
    if (handling === 'cancel') {
      const requestId = notification.params?.requestId;
      const owner = exchange.sessionTag !== undefined && (typeof requestId === 'string' || typeof requestId === 'number') ? this.#inFlight.get(`${exchange.sessionTag} ${requestId}`) : undefined;
      if (owner !== undefined) targets = [owner];
    }
    await Promise.all(targets.map(async (target) => {
      try {
        await exchange.clients.get(target)?.send(notification, exchange.signal);
      } catch (error) {
        this.#logger.debug({ target, method: notification.method, error: asUpstreamError(target, error).message }, 'MCP notification not delivered');
      }
    }));
  }

  /** The client's answer to a server-to-client request: back to the target that asked, with its own id. */
  async answer(response: JsonRpcResponse, exchange: Exchange): Promise<void> {
    const origin = decodeServerRequestId(response.id);
    const client = origin && exchange.clients.get(origin.target);
    if (!origin || !client) {
      this.#logger.debug({ id: response.id }, 'MCP: dropping an answer to an unknown server request');
      return;
    }
    await client.send({ ...response, id: origin.id }, exchange.signal);
  }

  async #route(request: JsonRpcRequest, exchange: Exchange): Promise<Routed> {
    const params = request.params ?? {};
    const kind = itemKindOf(request.method);
    if (request.method === 'completion/complete') {
      const ref = typeof params.ref === 'object' && params.ref !== null ? (params.ref as Record<string, unknown>) : {};
      if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
        const routed = await this.#byName('prompt', ref.name, request.method, exchange);
        return { ...routed, params: { ...params, ref: { ...ref, name: routed.item.name } } };
      }
      if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
        const routed = await this.#byUri(ref.uri, exchange);
        return { ...routed, params: { ...params, ref: { ...ref, uri: routed.item.name } } };
      }
      throw new McpError(ErrorCode.InvalidParams, 'completion/complete needs ref.name (prompt) or ref.uri (resource)');
    }
    if (kind === 'resource') {
      if (typeof params.uri !== 'string') throw new McpError(ErrorCode.InvalidParams, `${request.method} needs params.uri`);
      const routed = await this.#byUri(params.uri, exchange);
      return { ...routed, params: { ...params, uri: routed.item.name } };
    }
    if (kind === 'tool' || kind === 'prompt') {
      if (typeof params.name !== 'string') throw new McpError(ErrorCode.InvalidParams, `${request.method} needs params.name`);
      const routed = await this.#byName(kind, params.name, request.method, exchange);
      return { ...routed, params: { ...params, name: routed.item.name } };
    }
    if (exchange.clients.size === 1) {
      const [[target, client]] = exchange.clients;
      return { target, client, params };
    }
    throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
  }

  async #byName(kind: 'tool' | 'prompt', exposed: string, method: string, exchange: Exchange): Promise<Routed & { item: { kind: ItemKind; name: string } }> {
    let target: string | undefined;
    let name = exposed;
    if (this.#namer.prefixNames) {
      const routed = this.#namer.routeName(exposed);
      target = routed?.target;
      name = routed?.value ?? exposed;
    } else if (exchange.clients.size === 1 && this.#backend.targets.length === 1) {
      target = exchange.clients.keys().next().value;
    } else {
      const owners = await findOwners(kind, exposed, exchange.clients, this.#listEnv(exchange));
      if (owners.length > 1) {
        throw new McpError(ErrorCode.InvalidParams, `The ${kind} name "${exposed}" is served by several targets (${owners.join(', ')}); with prefixMode Never names must be unique across targets`);
      }
      target = owners[0];
    }
    const client = target === undefined ? undefined : exchange.clients.get(target);
    if (target === undefined || client === undefined || !this.#authorizerOf(exchange).allows({ kind, target, name }, method, exchange.context)) {
      // Unknown and forbidden look the same, so a client cannot probe for items it may not use.
      throw new McpError(ErrorCode.InvalidParams, kind === 'tool' ? `Unknown tool: ${exposed}` : `Unknown prompt: ${exposed}`);
    }
    return { target, client, params: {}, item: { kind, name } };
  }

  /**
   * A resource URI's target. `<target>+<uri>` names it; a URI without a known target prefix is
   * routed as is to the only target, or (several targets) to the one target whose list or
   * templates hold it among those the caller may use. Unknown, forbidden and ambiguous URIs all
   * answer "Resource not found" (ambiguity is logged), so a client cannot probe.
   */
  async #byUri(exposed: string, exchange: Exchange): Promise<Routed & { item: { kind: ItemKind; name: string } }> {
    const notFound = (): McpError => new McpError(ErrorCode.ResourceNotFound, 'Resource not found', { uri: exposed });
    const allowed = (target: string, uri: string): boolean => this.#authorizerOf(exchange).allows({ kind: 'resource', target, name: uri }, 'resources/read', exchange.context);
    const prefixed = this.#namer.routeUri(exposed);
    if (prefixed) {
      const client = exchange.clients.get(prefixed.target);
      if (!client || !allowed(prefixed.target, prefixed.value)) throw notFound();
      return { target: prefixed.target, client, params: {}, item: { kind: 'resource', name: prefixed.value } };
    }
    let owners: string[];
    if (this.#backend.targets.length === 1) owners = [...exchange.clients.keys()];
    else owners = await findUriOwners(exposed, exchange.clients, this.#listEnv(exchange));
    owners = owners.filter((t) => allowed(t, exposed));
    if (owners.length > 1) this.#logger.warn({ uri: exposed, targets: owners }, 'MCP: an unprefixed resource URI is served by several targets; use the prefixed form');
    const client = owners.length === 1 ? exchange.clients.get(owners[0]) : undefined;
    if (!client) throw notFound();
    return { target: owners[0], client, params: {}, item: { kind: 'resource', name: exposed }, plainUri: exposed };
  }

  async #forward(request: JsonRpcRequest, routed: Routed, exchange: Exchange): Promise<JsonRpcResponse> {
    const key = exchange.sessionTag === undefined ? undefined : `${exchange.sessionTag} ${request.id}`;
    if (key !== undefined) this.#inFlight.set(key, routed.target);
    const tool = request.method === 'tools/call' && routed.item?.kind === 'tool' ? routed.item.name : undefined;
    try {
      let response: JsonRpcResponse;
      try {
        response = await routed.client.request(
          { ...request, params: routed.params },
          (m) => exchange.sink(this.toClient(routed.target, m, exchange.sessionTag)),
          exchange.signal,
          exchange.answerHeaders,
        );
      } catch (err) {
        countMcpCall(this.#backend.key, routed.target, request.method, tool, false);
        throw err;
      }
      countMcpCall(this.#backend.key, routed.target, request.method, tool, response.result !== undefined && !isToolError(response.result));
      if (!response.result) return { ...response, id: request.id };
      if (exchange.sessionTag !== undefined && routed.item?.kind === 'resource' && (request.method === 'resources/subscribe' || request.method === 'resources/unsubscribe')) {
        this.#plainUris.set(exchange.sessionTag, routed.target, routed.item.name, request.method === 'resources/subscribe' && routed.plainUri !== undefined);
      }
      return { ...response, id: request.id, result: exposeContentUris(routed.target, response.result, this.#namer, routed.plainUri) };
    } finally {
      if (key !== undefined) this.#inFlight.delete(key);
    }
  }

  async #broadcastRequest(request: JsonRpcRequest, exchange: Exchange): Promise<void> {
    const targets = [...exchange.clients.keys()];
    const settled = await Promise.allSettled(targets.map((t) => (exchange.clients.get(t) as UpstreamClient).request(request, (m) => exchange.sink(this.toClient(t, m, exchange.sessionTag)), exchange.signal)));
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') return;
      const failure = asUpstreamError(targets[i], s.reason);
      if (failure.failure === 'evicted') return;
      if (failure.failure === 'session_expired' || this.#backend.failureMode === 'FailClosed') throw failure;
      this.#logger.warn({ target: targets[i], method: request.method, error: failure.message }, 'MCP FailOpen: skipping a failed target');
    });
  }

  #authorizerOf(exchange: Exchange): ItemAuthorizer {
    return exchange.policy?.authorizer ?? this.#authorizer;
  }

  #listEnv(exchange: Exchange): ListEnv {
    return {
      namer: this.#namer, authorizer: this.#authorizerOf(exchange), failureMode: this.#backend.failureMode, logger: this.#logger,
      sink: exchange.sink, plain: (t, uri) => this.#plainUris.has(exchange.sessionTag, t, uri), ...(exchange.context ? { context: exchange.context } : {}), ...(exchange.signal ? { signal: exchange.signal } : {}),
    };
  }
}

/** A tools/call result with `isError: true` is a failed call the target reported as a result. */
function isToolError(result: unknown): boolean {
  return typeof result === 'object' && result !== null && (result as { isError?: unknown }).isError === true;
}
