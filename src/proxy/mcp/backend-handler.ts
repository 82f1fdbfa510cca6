import type { IncomingHttpHeaders } from 'node:http';
import type { BackendHandler, HandlerFactory, HandlerRequest } from '../backends/handlers.ts';
import type { DownstreamRequest as ProxyRequest, DownstreamResponse as ProxyResponse } from '../pipeline/downstream.ts';
import { RequestPolicyContext } from '../policies/request-context.ts';
import type { DownstreamRequest, DownstreamResponse } from './downstream/io.ts';
import { createMcpHandler } from './index.ts';

/**
 * The request the MCP handler sees: the client's method and URL (legacy SSE endpoints and
 * `?sessionId=` are client-facing), the headers after route filters and traffic policies, and
 * the body a traffic policy already buffered (the stream is consumed then) or else the stream.
 */
export function mcpRequestView(req: ProxyRequest, request: Pick<HandlerRequest, 'headers' | 'policy'>): DownstreamRequest {
  const buffered = request.policy instanceof RequestPolicyContext ? request.policy.bufferedBody : undefined;
  const headers = request.headers as IncomingHttpHeaders;
  const body: AsyncIterable<Buffer | string> = buffered === undefined ? (req as AsyncIterable<Buffer | string>) : oneChunk(buffered);
  return {
    method: req.method,
    url: req.url,
    headers,
    [Symbol.asyncIterator]: () => body[Symbol.asyncIterator](),
  };
}

async function* oneChunk(body: Buffer): AsyncGenerator<Buffer> {
  if (body.length > 0) yield body;
}

/** Counts what the client is sent, for the access log and metrics (`done(status, bytes)`). */
export class CountingResponse implements DownstreamResponse {
  status = 200;
  bytes = 0;
  readonly #res: ProxyResponse;

  constructor(res: ProxyResponse) {
    this.#res = res;
  }

  get headersSent(): boolean {
    return this.#res.headersSent;
  }

  get writableEnded(): boolean {
    return this.#res.writableEnded;
  }

  writeHead(status: number, headers: Record<string, string | number> = {}): unknown {
    this.status = status;
    return this.#res.writeHead(status, headers);
  }

  write(chunk: string): boolean {
    const buffer = Buffer.from(chunk);
    this.bytes += buffer.length;
    return this.#res.write(buffer);
  }

  end(chunk?: string): unknown {
    if (chunk === undefined) return this.#res.end();
    this.bytes += Buffer.byteLength(chunk);
    return this.#res.end(chunk);
  }

  once(event: 'close', listener: () => void): unknown {
    return this.#res.on(event, listener);
  }
}

/** Serves ProxyBackends with `spec.mcp` through the MCP multiplexer, in-process. */
export const mcpHandlerFactory: HandlerFactory = (backend, deps): BackendHandler | undefined => {
  if (!backend.mcp) return undefined;
  const mcp = createMcpHandler(backend.mcp, { logger: deps.logger });
  return {
    handle(req, res, request) {
      const counted = new CountingResponse(res);
      const finished = () => request.done(counted.status, counted.bytes);
      const celContext = request.policy?.cel();
      const ctx = {
        ...(celContext ? { celContext } : {}),
        ...(request.backendPolicy ? { backendPolicy: request.backendPolicy } : {}),
        ...(request.policy ? { policy: request.policy } : {}),
      };
      mcp.serve(mcpRequestView(req, request), counted, ctx).then(finished, (err: unknown) => {
        deps.logger.error({ err, backend: backend.key }, 'MCP handler failed');
        finished();
      });
    },
    close: () => mcp.close(),
  };
};
