import { attributeValue, conditionHolds } from '../../../cel/index.ts';
import { CREDENTIAL_HEADERS, type Logger } from '../../../common/logger.ts';
import { REDACTED } from '../../../common/secret-matcher.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { accessLog, type AccessLogRecord } from '../../telemetry/access-log.ts';
import { requestActivation, type EndNames, type RequestFacts } from '../../telemetry/request-facts.ts';
import type { AccessLogSettings } from './compile.ts';

/**
 * Whether a bind's access log runs CEL at the request's end: then the request carries its facts
 * (telemetry/request-facts.ts) so the expressions see what it earned; other binds pay nothing.
 */
export function accessLogReadsFacts(settings: AccessLogSettings | undefined): boolean {
  return settings !== undefined && (settings.filter !== undefined || settings.add.length > 0);
}

/**
 * The access log line under frontend.accessLog: `filter` decides whether the request is logged
 * (a failing filter logs nothing), `attributes.remove` drops default fields and `attributes.add`
 * appends CEL values; an expression that fails drops only its own pair (SPEC.md Errors).
 * Expressions see every variable the request earned: the identities its policies established
 * (`jwt`, `apiKey`, `basicAuth`, `extauthz`, `extproc`), `llm.*` and `mcp.*` from `facts`, the
 * answer's `response.code` and the gateway, listener, route and backend names.
 */
export function writeAccessLog(
  logger: Logger,
  settings: AccessLogSettings | undefined,
  record: AccessLogRecord,
  req: DownstreamRequest,
  scheme: 'http' | 'https',
  names: EndNames,
  facts: RequestFacts | undefined,
): void {
  if (!settings) {
    accessLog(logger, record);
    return;
  }
  if (!logger.isLevelEnabled('info')) return;
  const activation = accessLogReadsFacts(settings) ? requestActivation(req, scheme, { status: record.status, names, facts }) : undefined;
  if (settings.filter && activation && !conditionHolds(settings.filter, activation)) return;
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) if (!settings.remove.has(name)) fields[name] = value;
  if (activation) {
    for (const { name, program } of settings.add) {
      const value = attributeValue(program, activation);
      if (value !== undefined) fields[name] = withoutCredentialHeaders(value);
    }
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
