/**
 * The OpenTelemetry SDK objects behind one bind's `frontend.accessLog.otlp`: an OTLP log exporter
 * (gRPC, or HTTP with binary protobuf — SPEC.md `protocol`, default GRPC), a batch processor with a
 * bounded queue and a logger provider. One per compiled config; shut down (pending records flushed)
 * when the config is retired, like the tracer provider (tracing/provider.ts).
 */
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { logExporterClasses } from '../otlp-exporters.ts';

/**
 * Bounds on what one bind's exported access log may hold in memory (docs/observability.md,
 * docs/security.md): records beyond the queue are dropped, not buffered; attribute values taken
 * from requests are cut at a length and a record keeps at most so many attributes.
 */
export const LOG_LIMITS = {
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 1000,
  exportTimeoutMillis: 10_000,
  attributeValueLengthLimit: 1024,
  attributeCountLimit: 64,
} as const;

/** SPEC.md accessLog.otlp `path` default (HTTP only). */
export const OTLP_HTTP_LOGS_PATH = '/v1/logs';

export interface LogExportSetup {
  /** The OTLP server as `http(s)://host:port[/path]` (the policy's `url`, or its backend's address). */
  readonly endpoint: string;
  readonly protocol: 'HTTP' | 'GRPC';
  /** HTTP only: the path records are posted to, replacing the endpoint's own path. */
  readonly path: string;
  /** Tests pass an in-memory exporter; the runtime exports over OTLP. */
  readonly exporter?: LogRecordExporter;
}

/** The URL the exporter sends to: the endpoint's origin plus `path` for HTTP, the origin for gRPC. */
export function logsExportUrl(endpoint: string, protocol: 'HTTP' | 'GRPC', path: string): string {
  const url = new URL(endpoint);
  if (protocol === 'GRPC') return url.origin;
  return `${url.origin}${path.startsWith('/') ? path : `/${path}`}`;
}

export function createLogProvider(setup: LogExportSetup): LoggerProvider {
  const exporter = setup.exporter ?? otlpExporter(logsExportUrl(setup.endpoint, setup.protocol, setup.path), setup.protocol);
  return new LoggerProvider({
    logRecordLimits: {
      attributeValueLengthLimit: LOG_LIMITS.attributeValueLengthLimit,
      attributeCountLimit: LOG_LIMITS.attributeCountLimit,
    },
    processors: [new BatchLogRecordProcessor({
      exporter,
      maxQueueSize: LOG_LIMITS.maxQueueSize,
      maxExportBatchSize: LOG_LIMITS.maxExportBatchSize,
      scheduledDelayMillis: LOG_LIMITS.scheduledDelayMillis,
      exportTimeoutMillis: LOG_LIMITS.exportTimeoutMillis,
    })],
  });
}

function otlpExporter(url: string, protocol: 'HTTP' | 'GRPC'): LogRecordExporter {
  const timeoutMillis = LOG_LIMITS.exportTimeoutMillis;
  const { Grpc: GrpcExporter, Http: HttpExporter } = logExporterClasses();
  if (protocol === 'HTTP') return new HttpExporter({ url, timeoutMillis });
  // TLS for an https URL, plaintext for http (the gRPC exporter's default credentials by scheme).
  return new GrpcExporter({ url, timeoutMillis });
}
