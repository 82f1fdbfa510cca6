import { moduleLogger, type Logger } from '../../common/logger.ts';
import type { LogModule } from '../../common/log-filter.ts';
import type { HandlerFactory } from './handlers.ts';

/**
 * `factory` with its handlers logging as `module` (the level ProxyParameters logging.level gives
 * it, e.g. `mcp=debug`). The module logger is made once per runtime logger, not per backend.
 */
export function inModule(module: LogModule, factory: HandlerFactory): HandlerFactory {
  const loggers = new WeakMap<Logger, Logger>();
  return (backend, deps) => {
    let logger = loggers.get(deps.logger);
    if (logger === undefined) {
      logger = moduleLogger(deps.logger, module);
      loggers.set(deps.logger, logger);
    }
    return factory(backend, logger === deps.logger ? deps : { ...deps, logger });
  };
}
