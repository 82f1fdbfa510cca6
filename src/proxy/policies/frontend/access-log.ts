import { attributeValue, conditionHolds, type Activation } from '../../../cel/index.ts';
import { CREDENTIAL_HEADERS, type Logger } from '../../../common/logger.ts';
import { REDACTED } from '../../../common/secret-matcher.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { accessLog, type AccessLogRecord } from '../../telemetry/access-log.ts';
import { requestActivation, type EndNames, type RequestFacts } from '../../telemetry/request-facts.ts';
import { exportRecord, type CompiledLogExport, type LogSelection } from '../../telemetry/logs/compile.ts';
import type { AccessLogSettings } from './compile.ts';

/**
 * Whether a bind's access log runs CEL at the request's end (its stdout line's or its OTLP
 * export's filter or attributes): then the request carries its facts (telemetry/request-facts.ts)
 * so the expressions see what it earned; other binds pay nothing.
 */
export function accessLogReadsFacts(settings: LogSelection | undefined, otlp?: LogSelection): boolean {
  return usesCel(settings) || usesCel(otlp);
}

function usesCel(selection: LogSelection | undefined): boolean {
  return selection !== undefined && (selection.filter !== undefined || selection.add.length > 0);
}

/**
 * The access log of one request under frontend.accessLog: the stdout line and, with `otlp`, the
 * exported OTLP record. For each, `filter` decides whether the request is logged (a failing filter
 * logs nothing), `attributes.remove` drops default fields and `attributes.add` appends CEL values;
 * an expression that fails drops only its own pair (SPEC.md Errors). Expressions see every variable
 * the request earned: the identities its policies established (`jwt`, `apiKey`, `basicAuth`,
 * `extauthz`, `extproc`), `llm.*` and `mcp.*` from `facts`, the answer's `response.code` and the
 * gateway, listener, route and backend names. One activation serves both sinks.
 */
export function writeAccessLog(
  logger: Logger,
  settings: AccessLogSettings | undefined,
  record: AccessLogRecord,
  req: DownstreamRequest,
  scheme: 'http' | 'https',
  names: EndNames,
  facts: RequestFacts | undefined,
  otlp?: CompiledLogExport,
): void {
  if (!settings) accessLog(logger, record);
  if (!settings && !otlp) return;
  let activation: Activation | undefined;
  const activate = (): Activation => (activation ??= requestActivation(req, scheme, { status: record.status, names, facts }));
  if (settings && logger.isLevelEnabled('info')) {
    const fields = selectFields(settings, record, activate);
    if (fields) logger.info(fields, 'request');
  }
  if (otlp) {
    const fields = selectFields(otlp, record, activate);
    if (fields) exportRecord(otlp.logger, fields);
  }
}

/** The fields one sink logs for the request, or undefined when its filter leaves it out. */
function selectFields(selection: LogSelection, record: AccessLogRecord, activate: () => Activation): Record<string, unknown> | undefined {
  if (selection.filter && !conditionHolds(selection.filter, activate())) return undefined;
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) if (!selection.remove.has(name)) fields[name] = value;
  if (selection.add.length > 0) {
    const activation = activate();
    for (const { name, program } of selection.add) {
      const value = attributeValue(program, activation);
      if (value !== undefined) fields[name] = withoutCredentialHeaders(value);
    }
  }
  return fields;
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
