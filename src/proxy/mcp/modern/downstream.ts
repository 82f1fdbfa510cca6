import { randomUUID } from 'node:crypto';
import type { CelInput } from '../../../cel/index.ts';
import { accepts, keepAlive, sendError, sendJson, startEventStream, writeEvent, type DownstreamRequest, type DownstreamResponse } from '../downstream/io.ts';
import { answerHeadersOf } from '../downstream/answer-headers.ts';
import type { StreamableDeps } from '../downstream/streamable.ts';
import { LATEST_SESSION_PROTOCOL } from '../initialize.ts';
import { ErrorCode, errorOf, isNotification, isRequest, McpError, resultOf, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest, type JsonRpcResponse, type Params } from '../jsonrpc.ts';
import type { OpenSession } from '../sessions.ts';
import type { UpstreamContext } from '../upstream/policy.ts';
import { asUpstreamError } from '../upstream/client.ts';
import { legacyInitializeParams, META, SUPPORTED_MODERN_PROTOCOLS, type Envelope } from './envelope.ts';

/** What the gateway also speaks on the same endpoint, for `server/discover`'s supportedVersions. */
const LEGACY_PROTOCOLS = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** Notifications a `subscriptions/listen` filter can ask for, by the filter flag that selects them. */
const LIST_CHANGED: Readonly<Record<string, 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'>> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
};

interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

function clientGone(res: DownstreamResponse): AbortController {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) abort.abort();
  });
  return abort;
}

/** The operations whose results are cacheable (`ttlMs` and `cacheScope` required) in this revision. */
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read']);

/**
 * Results of the stateless era carry a discriminator (`input_required` from a target passes
 * through as is) and, for cacheable operations, cache hints. Merged lists are filtered per
 * caller by authorization rules and change with target health: private, not cached.
 */
function complete(method: string, response: JsonRpcResponse): JsonRpcResponse {
  if (!response.result || 'resultType' in response.result) return response;
  const hints = CACHEABLE.has(method) ? { ttlMs: 0, cacheScope: 'private' } : {};
  return { ...response, result: { ...hints, ...response.result, resultType: 'complete' } };
}

/**
 * Serves clients of the stateless 2026-07-28 revision: `server/discover`, one request per POST
 * with its own `_meta` envelope, and `subscriptions/listen`. Targets may be of either era: the
 * gateway opens a short upstream session per request with the client's envelope as initialize
 * params (2025-era targets know no other way), and closes it when the answer is out.
 */
export class ModernDownstream {
  readonly #deps: StreamableDeps;

  constructor(deps: StreamableDeps) {
    this.#deps = deps;
  }

  async post(message: JsonRpcMessage, envelope: Envelope, req: DownstreamRequest, res: DownstreamResponse, context: CelInput | undefined, upstream: UpstreamContext): Promise<void> {
    if (isNotification(message)) {
      // No session outlives its request, so a notification has nothing to reach.
      res.writeHead(202);
      res.end();
      return;
    }
    if (!isRequest(message)) return sendError(res, 400, ErrorCode.InvalidRequest, 'The 2026-07-28 revision has no server-to-client requests to answer');
    const abort = clientGone(res);
    let session: (OpenSession & { result: Record<string, unknown> }) | undefined;
    try {
      session = await this.#deps.sessions.ephemeral(undefined, abort.signal, legacyInitializeParams(envelope, LATEST_SESSION_PROTOCOL), upstream);
    } catch (error) {
      if (error instanceof McpError) return sendJson(res, 200, errorOf(message.id, error.code, error.message));
      const failure = asUpstreamError('?', error);
      this.#deps.logger.warn({ target: failure.target, error: failure.message }, 'MCP request failed');
      return sendJson(res, 200, errorOf(message.id, ErrorCode.UpstreamFailed, `MCP target "${failure.target}" failed`));
    }
    try {
      switch (message.method) {
        case 'server/discover':
          return sendJson(res, 200, resultOf(message.id, this.#discover(session.result)));
        case 'subscriptions/listen':
          return await this.#listen(message, session, res, context, abort, upstream);
        case 'initialize':
          return sendJson(res, 200, errorOf(message.id, ErrorCode.MethodNotFound, 'initialize is not part of the 2026-07-28 revision; use server/discover'));
        default:
          return await this.#request(message, session, req, res, context, abort.signal, upstream);
      }
    } finally {
      await session.release();
    }
  }

  #discover(merged: Record<string, unknown>): Record<string, unknown> {
    return {
      resultType: 'complete',
      supportedVersions: [...SUPPORTED_MODERN_PROTOCOLS, ...LEGACY_PROTOCOLS],
      capabilities: merged.capabilities ?? {},
      ...(typeof merged.instructions === 'string' ? { instructions: merged.instructions } : {}),
      // Capabilities depend on which targets joined (FailOpen): never cache them for long.
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': merged.serverInfo },
    };
  }

  async #request(request: JsonRpcRequest, session: OpenSession, req: DownstreamRequest, res: DownstreamResponse, context: CelInput | undefined, signal: AbortSignal, upstream: UpstreamContext): Promise<void> {
    const streaming = accepts(req, 'text/event-stream');
    let streamed = false;
    // Progress and logging reach the client on this request's stream; server-to-client requests
    // do not exist in this revision, so a 2025-era target's are not forwarded.
    const sink = (m: JsonRpcMessage): void => {
      if (!streaming || !isNotification(m)) return;
      if (!streamed) {
        startEventStream(res);
        streamed = true;
      }
      writeEvent(res, m);
    };
    // One request per POST: routed to one target, that target's own response header changes apply to this answer.
    const answerHeaders = answerHeadersOf(res, upstream, this.#deps.logger);
    const exchange = { clients: session.clients, sink, signal, headers: req.headers, ...(context ? { context } : {}), ...(upstream.mcp ? { policy: upstream.mcp } : {}), ...(answerHeaders && { answerHeaders }) };
    let response: JsonRpcResponse;
    try {
      response = complete(request.method, await this.#deps.multiplexer.request(request, exchange));
    } catch (error) {
      const failure = asUpstreamError('?', error);
      response = errorOf(request.id, ErrorCode.UpstreamFailed, `MCP target "${failure.target}" failed`);
    }
    if (!streamed) return sendJson(res, 200, response);
    writeEvent(res, response);
    res.end();
  }

  /** A long-lived stream of the notifications the filter asks for, from every joined target. */
  async #listen(request: JsonRpcRequest, session: OpenSession, res: DownstreamResponse, context: CelInput | undefined, abort: AbortController, upstream: UpstreamContext): Promise<void> {
    const { multiplexer, logger } = this.#deps;
    const asked = (typeof request.params?.notifications === 'object' && request.params.notifications !== null ? request.params.notifications : {}) as SubscriptionFilter;
    // A tag of its own, so updates of URIs subscribed without a target prefix keep that form.
    const sessionTag = `listen-${randomUUID()}`;
    const exchange = { clients: session.clients, sink: () => undefined, signal: abort.signal, sessionTag, ...(context ? { context } : {}), ...(upstream.mcp ? { policy: upstream.mcp } : {}) };
    const subscribed = new Set<string>();
    for (const uri of Array.isArray(asked.resourceSubscriptions) ? asked.resourceSubscriptions : []) {
      if (typeof uri !== 'string') continue;
      // Routed and authorized like any resources/subscribe; what fails is left out of the acknowledgement.
      const answer = await multiplexer.request({ jsonrpc: '2.0', id: `sb-subscribe-${subscribed.size}`, method: 'resources/subscribe', params: { uri } }, exchange);
      if (!answer.error) subscribed.add(uri);
    }
    const honored: SubscriptionFilter = {
      ...(asked.toolsListChanged === true ? { toolsListChanged: true } : {}),
      ...(asked.promptsListChanged === true ? { promptsListChanged: true } : {}),
      ...(asked.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
      ...(subscribed.size > 0 ? { resourceSubscriptions: [...subscribed] } : {}),
    };
    const tag = { [META.subscriptionId]: request.id };
    startEventStream(res);
    const stop = keepAlive(res);
    writeEvent(res, { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: honored, _meta: tag } });
    const wanted = (m: JsonRpcNotification): boolean => {
      const flag = LIST_CHANGED[m.method];
      if (flag !== undefined) return honored[flag] === true;
      return m.method === 'notifications/resources/updated' && typeof m.params?.uri === 'string' && subscribed.has(m.params.uri);
    };
    await Promise.all([...session.clients].map(async ([target, client]) => {
      try {
        await client.listen((raw) => {
          const m = multiplexer.toClient(target, raw, sessionTag);
          if (!isNotification(m) || !wanted(m)) return;
          const params: Params = { ...m.params, _meta: { ...(m.params?._meta as Params | undefined), ...tag } };
          writeEvent(res, { ...m, params });
        }, abort.signal);
      } catch (error) {
        logger.warn({ target, error: asUpstreamError(target, error).message }, 'MCP: a target ended its notification stream');
      }
    }));
    stop();
    multiplexer.forget(sessionTag);
    // Every target's stream ended (or the client left): end the subscription gracefully.
    if (!abort.signal.aborted) writeEvent(res, resultOf(request.id, { _meta: tag }));
    res.end();
  }
}
