import type { Logger } from '../../common/logger.ts';

export interface AccessLogRecord {
  readonly method: string;
  /** Without the query string: queries often carry keys and tokens. */
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

export function pathOnly(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
