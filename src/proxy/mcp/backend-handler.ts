import type { ServerResponse } from 'node:http';
import type { BackendHandler, HandlerFactory } from '../backends/handlers.ts';
import { createMcpHandler } from './index.ts';

/** Serves ProxyBackends with `spec.mcp` through the MCP multiplexer, in-process. */
export const mcpHandlerFactory: HandlerFactory = (backend, deps): BackendHandler | undefined => {
  if (!backend.mcp) return undefined;
  const mcp = createMcpHandler(backend.mcp, { logger: deps.logger });
  return {
    handle(req, res, request) {
      const finished = () => request.done((res as unknown as ServerResponse).statusCode ?? 200, 0);
      mcp.handle(req, res as unknown as ServerResponse, { celContext: request.policy?.cel() }).then(finished, (err: unknown) => {
        deps.logger.error({ err, backend: backend.key }, 'MCP handler failed');
        finished();
      });
    },
    close: () => mcp.close(),
  };
};
