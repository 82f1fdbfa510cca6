import type { BackendHandler, HandlerFactory } from '../backends/handlers.ts';
import { sendError } from '../http/downstream.ts';
import { LlmBackendHandler } from './gateway/handler/index.ts';
import type { ProviderChoice } from './gateway/picker.ts';
import type { ProviderHealthBoard } from './gateway/provider-health.ts';

declare module '../backends/handlers.ts' {
  interface HandlerDeps {
    /** AI provider health shared by the LLM handlers of this runtime (admin API, metrics). */
    readonly providerHealth?: ProviderHealthBoard;
  }
}

/**
 * `SWITCHBOARD_LLM_PROVIDER_CHOICE=rotation` takes a group's providers in plain rotation instead
 * of by health: for comparing the two (bench/failover.ts), not a setting to run with.
 */
const PROVIDER_CHOICE: ProviderChoice = process.env.SWITCHBOARD_LLM_PROVIDER_CHOICE === 'rotation' ? 'rotation' : 'health';

/** Serves ProxyBackends with `spec.ai` in-process: translation, credentials, priority groups (gateway/handler/). */
export const llmHandlerFactory: HandlerFactory = (backend, deps): BackendHandler | undefined => {
  if (!backend.ai) return undefined;
  const llm = new LlmBackendHandler(backend.ai, { logger: deps.logger, ...(deps.providerHealth ? { providerHealth: deps.providerHealth } : {}), providerChoice: PROVIDER_CHOICE });
  return {
    filtersResponses: true,
    handle(req, res, request) {
      llm.serve(req, res, request).then(
        ({ status, bytes }) => request.done(status, bytes),
        (err: unknown) => {
          // A bug costs one request: answer if nothing was sent yet, else cut the response.
          deps.logger.error({ err, backend: backend.key }, 'LLM handler failed');
          request.done(sendError(res, { code: 'INTERNAL', cause: String(err) }), 0);
        },
      );
    },
    upgrade(req, socket, head, request) {
      llm.upgrade(req, socket, head, request).catch((err: unknown) => {
        deps.logger.error({ err, backend: backend.key }, 'LLM realtime handler failed');
        socket.destroy();
        request.done(500, 0);
      });
    },
    close: () => llm.close(),
  };
};
