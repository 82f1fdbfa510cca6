import type { Logger } from '../../../common/logger.ts';
import type { ScanResult } from './file-set.ts';

/**
 * Logs what a scan found that is new: each problem of a file (re)read in it with its location,
 * the files kept at their last good version, and ignored kinds (once per kind, not on every reload).
 */
export class ScanReporter {
  readonly #logger: Logger;
  readonly #loggedIgnoredKinds = new Set<string>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  report(result: ScanResult): void {
    const logger = this.#logger;
    for (const problem of result.newProblems) {
      logger.error({ file: problem.file, document: problem.document, line: problem.line, column: problem.column, path: problem.path }, problem.message);
    }
    for (const [file, keptObjects] of result.keptFromBrokenFiles) {
      logger.warn({ file, keptObjects }, 'configuration file is broken; keeping the objects of its last good version');
    }
    for (const kind of result.ignoredKinds) {
      if (this.#loggedIgnoredKinds.has(kind)) continue;
      this.#loggedIgnoredKinds.add(kind);
      logger.info({ kind }, 'ignoring objects of a kind the gateway does not read');
    }
  }
}
