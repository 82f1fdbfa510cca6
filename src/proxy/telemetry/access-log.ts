import type { Logger } from '../../common/logger.ts';

export interface AccessLogRecord {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly route: string;
  readonly backend: string;
  /** Response body bytes sent to the client. */
  readonly bytes: number;
}

/** One line per request at info; the level check first so a disabled log costs nothing. */
export function accessLog(logger: Logger, record: AccessLogRecord): void {
  if (logger.isLevelEnabled('info')) logger.info(record, 'request');
}
