/**
 * A bind's `frontend.accessLog.otlp` compiled once per config: where records go (OTLP over gRPC or
 * HTTP protobuf), which requests are exported (`filter`) and with which fields (`attributes`),
 * both defaulting to the parent access log's. The logger provider lives as long as its config: it is
 * shut down (pending records flushed) when the config is retired after a swap.
 */
import { SeverityNumber, type AnyValue, type Logger } from '@opentelemetry/api';

type AnyValueMap = Record<string, AnyValue>;
import type { LoggerProvider, LogRecordExporter } from '@opentelemetry/sdk-logs';
import { compile, type Program } from '../../../cel/index.ts';
import { scrubLogLine } from '../../../common/logger.ts';
import type { AccessLogPolicy } from '../../../ir/members.ts';
import type * as Provider from './provider.ts';
import { lazyModule } from '../../../common/lazy-module.ts';
import type { ExportLifecycle } from '../export-lifecycle.ts';

// The OpenTelemetry logs SDK: loaded when a config first exports access logs over OTLP, at compile
// time (lazy-module.ts), not by every gateway that exports none.
const logsProvider = lazyModule<typeof Provider>(import.meta.url, './provider.ts');

/** Which requests a log sink writes and with which fields (the stdout line's and the export's own). */
export interface LogSelection {
  readonly filter: Program | undefined;
  readonly remove: ReadonlySet<string>;
  readonly add: readonly { readonly name: string; readonly program: Program }[];
}

export interface CompiledLogExport extends LogSelection {
  readonly logger: Logger;
  readonly provider: LoggerProvider;
  /** A request holds its config (and so this provider) until its record is emitted. */
  readonly lifecycle: ExportLifecycle | undefined;
}

export interface LogExportDeps {
  /** The OTLP server's URL (`http(s)://host:port[/path]`); throws when the policy's backend cannot be resolved. */
  readonly endpoint: () => string;
  /** The provider is shut down when the config retires, after the requests holding it have ended. */
  readonly lifecycle?: ExportLifecycle;
  /** Tests: records go here instead of an OTLP exporter. */
  readonly exporter?: LogRecordExporter;
}

/** The instrumentation scope access-log records are reported under. */
export const ACCESS_LOG_SCOPE = 'switchboard.access_log';

type OtlpAccessLog = NonNullable<AccessLogPolicy['otlp']>;

/**
 * Undefined (reported) when the OTLP endpoint cannot be resolved: the bind logs to stdout only.
 * `parent` is the access log's own compiled selection, the default of `filter` and `attributes`.
 */
export function compileLogExport(otlp: OtlpAccessLog, parent: LogSelection | undefined, deps: LogExportDeps, onError: (message: string) => void): CompiledLogExport | undefined {
  let endpoint: string;
  try {
    endpoint = deps.endpoint();
  } catch (err) {
    onError(`OTLP endpoint: ${(err as Error).message}`);
    return undefined;
  }
  const expression = (what: string, text: string): Program | undefined => {
    const r = compile(text);
    if (r.ok) return r.program;
    onError(`${what}: invalid CEL expression: ${r.error.message}`);
    return undefined;
  };
  const filter = otlp.filter !== undefined ? expression('filter', otlp.filter) : parent?.filter;
  const remove = otlp.attributes ? new Set(otlp.attributes.remove ?? []) : (parent?.remove ?? new Set<string>());
  const add = otlp.attributes
    ? (otlp.attributes.add ?? []).flatMap((a) => {
      const program = expression(`attribute ${a.name}`, a.expression);
      return program ? [{ name: a.name, program }] : [];
    })
    : (parent?.add ?? []);
  const { createLogProvider, OTLP_HTTP_LOGS_PATH } = logsProvider();
  const provider = createLogProvider({
    endpoint,
    protocol: otlp.protocol ?? 'GRPC',
    path: otlp.path ?? OTLP_HTTP_LOGS_PATH,
    ...(deps.exporter ? { exporter: deps.exporter } : {}),
  });
  deps.lifecycle?.onRetire(() => void provider.shutdown());
  return { logger: provider.getLogger(ACCESS_LOG_SCOPE), provider, filter, remove, add, lifecycle: deps.lifecycle };
}

/** One access-log record as an OTLP log record: body "request", the line's fields as attributes. */
export function exportRecord(logger: Logger, fields: Readonly<Record<string, unknown>>): void {
  const attributes: AnyValueMap = {};
  for (const [name, value] of Object.entries(fields)) {
    const v = anyValue(value);
    if (v !== undefined) attributes[name] = v;
  }
  logger.emit({ severityNumber: SeverityNumber.INFO, severityText: 'INFO', body: 'request', attributes });
}

/**
 * CEL results into OTLP values: bigints as numbers, maps and lists kept, bytes as bytes; strings
 * are scrubbed of registered secret values as stdout lines are (common/logger.ts scrubLogLine).
 */
function anyValue(value: unknown): AnyValue | undefined {
  if (value === null || value === undefined) return undefined;
  switch (typeof value) {
    case 'string':
      return scrubLogLine(value);
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return Number(value);
    case 'object': {
      if (value instanceof Uint8Array) return value;
      if (Array.isArray(value)) return value.map((v) => anyValue(v) ?? null);
      const out: AnyValueMap = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        const converted = anyValue(v);
        if (converted !== undefined) out[k] = converted;
      }
      return out;
    }
    default:
      return undefined;
  }
}
