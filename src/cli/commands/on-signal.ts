import type { Logger } from '../../common/logger.ts';

/**
 * How the long-running commands (run, proxy, controller) end: the first SIGINT or SIGTERM runs
 * `stop` — each command's own drain — and the promise resolves with 0 once it settles (1 when it
 * fails); a second signal resolves with 1 at once, for an operator who will not wait for the drain.
 */
export function exitCodeOnSignal(logger: Logger, stop: (signal: NodeJS.Signals) => Promise<unknown>): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting without waiting for the drain');
        resolve(1);
        return;
      }
      stopping = true;
      stop(signal).then(
        () => { logger.info('shut down cleanly'); resolve(0); },
        (err: unknown) => { logger.error({ err }, 'shutdown failed'); resolve(1); },
      );
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
  });
}
