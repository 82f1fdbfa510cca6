import type { Logger } from '../../../common/logger.ts';
import type { CelInput } from '../../../cel/index.ts';
import { ErrorCode, errorOf, isNotification, isRequest, isResponse, McpError, resultOf, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '../jsonrpc.ts';
import type { Multiplexer } from '../multiplexer.ts';
import type { Namer } from '../naming.ts';
import type { OpenSession, SessionManager } from '../sessions.ts';
import type { UpstreamContext } from '../upstream/policy.ts';
import { UpstreamError, asUpstreamError } from '../upstream/client.ts';
import { mcpServerStreamSpan } from '../../telemetry/tracing/mcp.ts';
import { answerHeadersOf } from './answer-headers.ts';
import { accepts, keepAlive, readMessages, type ParsedBody, sendError, sendJson, startEventStream, writeEvent, type DownstreamRequest, type DownstreamResponse } from './io.ts';

const SESSION_HEADER = 'mcp-session-id';

export interface StreamableDeps {
  readonly sessions: SessionManager;
  readonly multiplexer: Multiplexer;
  readonly namer: Namer;
  readonly logger: Logger;
}

function headerOf(req: DownstreamRequest, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Aborts when the client goes away before the response is complete. */
function clientGone(res: DownstreamResponse): AbortController {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) abort.abort();
  });
  return abort;
}

function isSessionExpired(error: unknown): boolean {
  return error instanceof UpstreamError && error.failure === 'session_expired';
}

/** Streamable HTTP for clients (MCP 2025-03-26 and later): POST messages, GET the server stream, DELETE the session. */
export class StreamableDownstream {
  readonly #deps: StreamableDeps;

  constructor(deps: StreamableDeps) {
    this.#deps = deps;
  }

  async post(req: DownstreamRequest, res: DownstreamResponse, context: CelInput | undefined, upstream: UpstreamContext, parsed?: ParsedBody): Promise<void> {
    const body = parsed ?? await readMessages(req);
    if (!body.ok) return sendError(res, body.status, body.code, body.message);
    const abort = clientGone(res);
    const initialize = body.messages.find((m) => isRequest(m) && m.method === 'initialize') as JsonRpcRequest | undefined;
    if (initialize) {
      if (body.messages.length > 1) return sendError(res, 400, ErrorCode.InvalidRequest, 'initialize must be sent alone');
      return this.#initialize(initialize, res, abort.signal, upstream);
    }

    const { sessions } = this.#deps;
    let session: OpenSession | undefined;
    const id = headerOf(req, SESSION_HEADER);
    try {
      if (sessions.stateful) {
        if (id === undefined) return sendError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: missing mcp-session-id');
        session = await sessions.resume(id, abort.signal, upstream);
        if (!session) return sendError(res, 404, ErrorCode.InvalidRequest, 'Session not found');
      } else {
        session = await sessions.ephemeral(headerOf(req, 'mcp-protocol-version'), abort.signal, undefined, upstream);
      }
    } catch (error) {
      return this.#failed(res, error);
    }

    try {
      await this.#serve(body.messages, body.batch, session, req, res, context, abort.signal, id, upstream);
    } finally {
      await session.release();
    }
  }

  async get(req: DownstreamRequest, res: DownstreamResponse, upstream: UpstreamContext): Promise<void> {
    const { sessions, multiplexer, logger } = this.#deps;
    if (!sessions.stateful) return sendError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed: stateless MCP backend has no server stream', { allow: 'POST' });
    if (!accepts(req, 'text/event-stream')) return sendError(res, 406, ErrorCode.InvalidRequest, 'Not Acceptable: the client must accept text/event-stream');
    const id = headerOf(req, SESSION_HEADER);
    if (id === undefined) return sendError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: missing mcp-session-id');
    const abort = clientGone(res);
    let session: OpenSession | undefined;
    try {
      session = await sessions.resume(id, abort.signal, upstream);
    } catch (error) {
      return this.#failed(res, error);
    }
    if (!session) return sendError(res, 404, ErrorCode.InvalidRequest, 'Session not found');
    startEventStream(res);
    // Headers leave with the first bytes: without this comment a quiet stream's client would wait for the first keep-alive.
    res.write(': stream open\n\n');
    const stop = keepAlive(res);
    const streams = [...session.clients].map(async ([target, client]) => {
      // Traced requests: a CLIENT span per target's stream, its traceparent on the GET (telemetry/tracing/mcp.ts).
      const span = mcpServerStreamSpan(target, id);
      try {
        const offered = await client.listen((m) => {
          span?.message();
          writeEvent(res, multiplexer.toClient(target, m, id));
        }, abort.signal, span?.headers);
        span?.end({ offered });
      } catch (error) {
        span?.end({ error });
        const failure = asUpstreamError(target, error);
        logger.warn({ target, error: failure.message }, 'MCP: server stream of a target ended');
        if (failure.failure === 'session_expired') abort.abort();
      }
    });
    await Promise.all(streams);
    stop();
    res.end();
  }

  async delete(req: DownstreamRequest, res: DownstreamResponse, upstream: UpstreamContext): Promise<void> {
    const { sessions } = this.#deps;
    if (!sessions.stateful) return sendError(res, 405, ErrorCode.InvalidRequest, 'Method not allowed: stateless MCP backend has no sessions', { allow: 'POST' });
    const id = headerOf(req, SESSION_HEADER);
    if (id === undefined) return sendError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: missing mcp-session-id');
    let session: OpenSession | undefined;
    try {
      session = await sessions.resume(id, undefined, upstream);
    } catch (error) {
      return this.#failed(res, error);
    }
    if (!session) return sendError(res, 404, ErrorCode.InvalidRequest, 'Session not found');
    await sessions.terminate(id, session.clients);
    this.#deps.multiplexer.forget(id);
    res.writeHead(200);
    res.end();
  }

  async #initialize(request: JsonRpcRequest, res: DownstreamResponse, signal: AbortSignal, upstream: UpstreamContext): Promise<void> {
    const { sessions } = this.#deps;
    try {
      const created = await sessions.create(request.params ?? {}, signal, upstream);
      const headers: Record<string, string> = created.id !== undefined ? { [SESSION_HEADER]: created.id } : {};
      // Stateless: the upstream sessions existed only to learn the targets' capabilities.
      if (created.id === undefined) await Promise.all([...created.clients.values()].map((c) => c.close()));
      sendJson(res, 200, resultOf(request.id, created.result), headers);
    } catch (error) {
      // data (e.g. {status: 503, code: no_healthy_upstream} when every target is evicted) goes along.
      if (error instanceof McpError) return sendJson(res, 200, errorOf(request.id, error.code, error.message, error.data));
      this.#failed(res, error);
    }
  }

  async #serve(
    messages: readonly JsonRpcMessage[], batch: boolean, session: OpenSession, req: DownstreamRequest, res: DownstreamResponse,
    context: CelInput | undefined, signal: AbortSignal, sessionTag: string | undefined, upstream: UpstreamContext,
  ): Promise<void> {
    const { multiplexer } = this.#deps;
    const streaming = accepts(req, 'text/event-stream');
    let streamed = false;
    const sink = (message: JsonRpcMessage): void => {
      if (!streaming) return;
      if (!streamed) {
        startEventStream(res);
        streamed = true;
      }
      writeEvent(res, message);
    };
    // A POST of one request routed to one target: that target's own response header changes apply to this answer.
    const answerHeaders = answerHeadersOf(res, upstream, this.#deps.logger, messages);
    const exchange = {
      clients: session.clients, sink, signal, headers: req.headers, ...(context ? { context } : {}), ...(sessionTag !== undefined ? { sessionTag } : {}),
      ...(upstream.mcp ? { policy: upstream.mcp } : {}), ...(answerHeaders && { answerHeaders }),
    };
    const responses: JsonRpcResponse[] = [];
    try {
      await Promise.all(messages.map(async (message) => {
        if (isRequest(message)) {
          const response = await multiplexer.request(message, exchange);
          if (streamed) writeEvent(res, response);
          else responses.push(response);
        } else if (isNotification(message)) {
          await multiplexer.notify(message, exchange);
        } else if (isResponse(message)) {
          await multiplexer.answer(message, exchange);
        }
      }));
    } catch (error) {
      if (!isSessionExpired(error)) throw error;
      if (!streamed) return sendError(res, 404, ErrorCode.InvalidRequest, 'Session not found: an upstream session expired; initialize again');
      writeEvent(res, errorOf(null, ErrorCode.InvalidRequest, 'Session expired'));
    }
    if (streamed) {
      for (const response of responses) writeEvent(res, response);
      res.end();
      return;
    }
    if (responses.length === 0) {
      res.writeHead(202);
      res.end();
      return;
    }
    sendJson(res, 200, batch ? responses : responses[0]);
  }

  #failed(res: DownstreamResponse, error: unknown): void {
    if (isSessionExpired(error)) return sendError(res, 404, ErrorCode.InvalidRequest, 'Session not found: an upstream session expired; initialize again');
    if (error instanceof McpError) return sendError(res, 502, error.code, error.message);
    const failure = asUpstreamError('?', error);
    this.#deps.logger.warn({ target: failure.target, error: failure.message }, 'MCP request failed');
    sendError(res, 502, ErrorCode.UpstreamFailed, `MCP target "${failure.target}" failed`);
  }
}
