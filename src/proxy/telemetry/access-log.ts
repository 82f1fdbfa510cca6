import { writeInfoLine, type Logger } from '../../common/logger.ts';

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

/**
 * One line per request at info; the level check first so a disabled log costs nothing. The
 * record's fields are fixed, so a JSON logger takes them serialized here (the line pino would
 * write, field for field: access-log.test.ts compares them); a text logger gets the record.
 */
export function accessLog(logger: Logger, record: AccessLogRecord): void {
  if (writeInfoLine(logger, recordMembers(record), 'request')) return;
  if (logger.isLevelEnabled('info')) logger.info(record, 'request');
}

function recordMembers(r: AccessLogRecord): string {
  return '"method":' + jsonString(r.method) + ',"path":' + jsonString(r.path) + ',"status":' + jsonNumber(r.status) +
    ',"durationMs":' + jsonNumber(r.durationMs) + ',"route":' + jsonString(r.route) + ',"backend":' + jsonString(r.backend) +
    ',"bytes":' + jsonNumber(r.bytes);
}

/** Characters a JSON string must escape, and lone surrogate halves (JSON.stringify escapes those). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON must escape
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : '"' + value + '"';
}

function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

export function pathOnly(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
