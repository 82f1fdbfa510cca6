import { randomUUID } from 'node:crypto';
import type { Logger } from '../../../common/logger.ts';
import type { CelInput } from '../../../cel/index.ts';
import { ErrorCode, errorOf, isNotification, isRequest, isResponse, McpError, resultOf, type JsonRpcMessage } from '../jsonrpc.ts';
import type { Multiplexer } from '../multiplexer.ts';
import type { Namer } from '../naming.ts';
import { closeAll, type SessionManager } from '../sessions.ts';
import { asUpstreamError, type UpstreamClient } from '../upstream/client.ts';
import { mcpServerStreamSpan } from '../../telemetry/tracing/mcp.ts';
import type { UpstreamContext } from '../upstream/policy.ts';
import { keepAlive, readMessages, sendError, startEventStream, writeEvent, type DownstreamRequest, type DownstreamResponse } from './io.ts';

/** Open legacy streams per process; more are refused (503) rather than exhausting memory. */
const MAX_STREAMS = 10_000;

interface Stream {
  readonly id: string;
  readonly res: DownstreamResponse;
  readonly abort: AbortController;
  clients?: ReadonlyMap<string, UpstreamClient>;
}

export interface LegacyDeps {
  readonly sessions: SessionManager;
  readonly multiplexer: Multiplexer;
  readonly namer: Namer;
  readonly logger: Logger;
}

/**
 * The legacy HTTP+SSE transport for clients (MCP 2024-11-05): GET opens the stream and learns
 * the POST endpoint (`<path>?sessionId=<id>`); every answer travels on the stream. The stream
 * is a connection to this process, so the session lives here, with its upstream sessions, for
 * as long as the stream is open (in Stateless mode too: the transport cannot be stateless).
 */
export class LegacySseDownstream {
  readonly #deps: LegacyDeps;
  readonly #streams = new Map<string, Stream>();

  constructor(deps: LegacyDeps) {
    this.#deps = deps;
  }

  open(req: DownstreamRequest, res: DownstreamResponse): Promise<void> {
    if (this.#streams.size >= MAX_STREAMS) {
      sendError(res, 503, ErrorCode.InternalError, 'Too many open MCP streams');
      return Promise.resolve();
    }
    const id = randomUUID();
    const stream: Stream = { id, res, abort: new AbortController() };
    this.#streams.set(id, stream);
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    startEventStream(res);
    res.write(`event: endpoint\ndata: ${path}?sessionId=${id}\n\n`);
    const stop = keepAlive(res);
    return new Promise((resolve) => {
      res.once('close', () => {
        stop();
        this.#streams.delete(id);
        this.#deps.multiplexer.forget(id);
        stream.abort.abort();
        if (stream.clients) void closeAll(stream.clients);
        resolve();
      });
    });
  }

  async post(req: DownstreamRequest, res: DownstreamResponse, sessionId: string, context: CelInput | undefined, upstream: UpstreamContext): Promise<void> {
    const stream = this.#streams.get(sessionId);
    if (!stream) return sendError(res, 404, ErrorCode.InvalidRequest, 'Session not found');
    const body = await readMessages(req);
    if (!body.ok) return sendError(res, body.status, body.code, body.message);
    res.writeHead(202);
    res.end();
    await Promise.all(body.messages.map((m) => this.#handle(stream, m, context, req.headers, upstream)));
  }

  async close(): Promise<void> {
    for (const stream of this.#streams.values()) stream.res.end();
    this.#streams.clear();
  }

  async #handle(stream: Stream, message: JsonRpcMessage, context: CelInput | undefined, headers: DownstreamRequest['headers'], upstream: UpstreamContext): Promise<void> {
    const { multiplexer, sessions, logger } = this.#deps;
    const send = (m: JsonRpcMessage): void => writeEvent(stream.res, m);
    if (isRequest(message) && message.method === 'initialize') {
      if (stream.clients) return send(errorOf(message.id, ErrorCode.InvalidRequest, 'The session is already initialized'));
      try {
        // The upstream sessions live as long as the stream, with the credentials of this request.
        const created = await sessions.create(message.params ?? {}, stream.abort.signal, upstream);
        stream.clients = created.clients;
        send(resultOf(message.id, created.result));
        this.#listen(stream);
      } catch (error) {
        const failure = error instanceof McpError ? error : new McpError(ErrorCode.UpstreamFailed, asUpstreamError('?', error).message);
        send(errorOf(message.id, failure.code, failure.message));
      }
      return;
    }
    if (!stream.clients) {
      if (isRequest(message)) send(errorOf(message.id, ErrorCode.InvalidRequest, 'The session is not initialized'));
      return;
    }
    const exchange = { clients: stream.clients, sink: send, signal: stream.abort.signal, headers, ...(context ? { context } : {}), sessionTag: stream.id, ...(upstream.mcp ? { policy: upstream.mcp } : {}) };
    try {
      if (isRequest(message)) send(await multiplexer.request(message, exchange));
      else if (isNotification(message)) await multiplexer.notify(message, exchange);
      else if (isResponse(message)) await multiplexer.answer(message, exchange);
    } catch (error) {
      logger.warn({ error: asUpstreamError('?', error).message }, 'MCP: upstream session lost; closing the client stream');
      stream.res.end();
    }
  }

  /** Server-initiated messages of every target onto the client's stream. */
  #listen(stream: Stream): void {
    const { multiplexer, logger } = this.#deps;
    for (const [target, client] of stream.clients ?? []) {
      // Traced requests: a CLIENT span per target's stream, until it ends (telemetry/tracing/mcp.ts).
      const span = mcpServerStreamSpan(target, stream.id);
      client.listen((m) => {
        span?.message();
        writeEvent(stream.res, multiplexer.toClient(target, m, stream.id));
      }, stream.abort.signal, span?.headers).then((offered) => span?.end({ offered }), (error: unknown) => {
        span?.end({ error });
        logger.debug({ target, error: asUpstreamError(target, error).message }, 'MCP: server stream of a target ended');
      });
    }
  }
}
