import { attributeValue, conditionHolds, createActivation } from '../../../cel/index.ts';
import { CREDENTIAL_HEADERS, type Logger } from '../../../common/logger.ts';
import { REDACTED } from '../../../common/secret-matcher.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { accessLog, type AccessLogRecord } from '../../telemetry/access-log.ts';
import type { AccessLogSettings } from './compile.ts';

/**
 * The access log line under frontend.accessLog: `filter` decides whether the request is logged
 * (a failing filter logs nothing), `attributes.remove` drops default fields and `attributes.add`
 * appends CEL values; an expression that fails drops only its own pair (SPEC.md Errors).
 */
export function writeAccessLog(logger: Logger, settings: AccessLogSettings | undefined, record: AccessLogRecord, req: DownstreamRequest, scheme: 'http' | 'https'): void {
  if (!settings) {
    accessLog(logger, record);
    return;
  }
  if (!logger.isLevelEnabled('info')) return;
  const host = req.headers[':authority'] ?? req.headers.host;
  const activation = createActivation({
    request: { method: record.method, url: req.url ?? '/', host: typeof host === 'string' ? host : undefined, scheme, headers: req.headers, version: req.httpVersion === '2.0' ? 'HTTP/2' : `HTTP/${req.httpVersion}` },
    source: { address: req.socket.remoteAddress ?? '', port: req.socket.remotePort ?? 0 },
    response: { code: record.status },
    route: { name: record.route },
    backend: { name: record.backend },
  });
  if (settings.filter && !conditionHolds(settings.filter, activation)) return;
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) if (!settings.remove.has(name)) fields[name] = value;
  for (const { name, program } of settings.add) {
    const value = attributeValue(program, activation);
    if (value !== undefined) fields[name] = withoutCredentialHeaders(value);
  }
  logger.info(fields, 'request');
}

const CREDENTIAL = new Set(CREDENTIAL_HEADERS);

/**
 * An attribute that yields a whole header map (`request.headers`) logs every header but the
 * credentials: those show as "[redacted]". A single header asked for by name is logged as asked.
 */
function withoutCredentialHeaders(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  if (!entries.some(([k]) => CREDENTIAL.has(k.toLowerCase()))) return value;
  return Object.fromEntries(entries.map(([k, v]) => [k, CREDENTIAL.has(k.toLowerCase()) ? REDACTED : v]));
}
