import { createLogger, moduleLogger } from '../../common/logger.ts';
import { ConfigThread } from '../../embedded/config-thread.ts';
import type { RunOptions } from '../args.ts';

/**
 * `switchboard run`: the embedded gateway. Resolves with the exit code once it has shut down
 * (after a signal), or 1 when it cannot start.
 *
 * Reading, parsing and translating run off the serving event loop, in one thread that holds the
 * objects (the serving thread gets the IR's changes). That thread starts first, with only this
 * small module loaded: it reads, parses and translates the files while this thread loads the proxy
 * (run-gateway.ts and its ~1,200 modules, 0.5–1.5 s), so the two overlap instead of adding up
 * (issue 15: time to ready). Its results wait for the gateway (ConfigThread.begin).
 */
export async function run(options: RunOptions): Promise<number> {
  const logger = createLogger({ level: options.logLevel, format: options.logFormat, ...(options.logFilter ? { filter: options.logFilter } : {}) });
  const configThread = new ConfigThread({
    paths: options.files,
    logger: moduleLogger(logger, 'source'),
    gatewayLogger: logger,
    ...(options.proxyModels ? { translateOptions: { proxyModels: true } } : {}),
  });
  configThread.begin();
  const serving = await import('./run-gateway.ts').catch(async (err: unknown) => {
    await configThread.stop();
    throw err;
  });
  return serving.serveEmbedded(options, logger, configThread);
}
