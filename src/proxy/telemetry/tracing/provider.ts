/**
 * The OpenTelemetry SDK objects behind one bind's `frontend.tracing`: an OTLP exporter (HTTP
 * protobuf or gRPC, SPEC.md `protocol`), a batch span processor with a bounded queue and a tracer
 * provider carrying the policy's resource attributes. One per compiled config; shut down (pending
 * spans flushed) when the config is retired.
 */
import type { Attributes } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { traceExporterClasses } from '../otlp-exporters.ts';

/**
 * Bounds on what one bind's traces may hold in memory (docs/observability.md, docs/security.md):
 * spans beyond the queue are dropped, not buffered; attribute values taken from requests (paths,
 * user agents, model names, CEL results) are cut at a length, and a span keeps at most so many
 * attributes and events.
 */
export const TRACE_LIMITS = {
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 1000,
  exportTimeoutMillis: 10_000,
  attributeValueLengthLimit: 1024,
  attributeCountLimit: 64,
  eventCountLimit: 16,
} as const;

/** The OTLP/HTTP traces path (opentelemetry-proto's `v1/traces`), appended to a URL's own path. */
export const OTLP_HTTP_TRACES_PATH = '/v1/traces';

export interface TracerSetup {
  /** The OTLP server as `http(s)://host:port[/path]` (the policy's `url`, or its backend's address). */
  readonly endpoint: string;
  readonly protocol: 'HTTP' | 'GRPC';
  readonly resource: Attributes;
  /** Tests pass an in-memory exporter; the runtime exports over OTLP. */
  readonly exporter?: SpanExporter;
}

/** The URL the exporter posts to: `…/v1/traces` for HTTP (unless the URL already names it), the origin for gRPC. */
export function exportUrl(endpoint: string, protocol: 'HTTP' | 'GRPC'): string {
  const url = new URL(endpoint);
  if (protocol === 'GRPC') return url.origin;
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  return base.endsWith(OTLP_HTTP_TRACES_PATH) ? base : `${base}${OTLP_HTTP_TRACES_PATH}`;
}

export function createTracerProvider(setup: TracerSetup): TracerProvider {
  const exporter = setup.exporter ?? otlpExporter(setup.endpoint, setup.protocol);
  return new TracerProvider({
    // Sampling is decided before a span exists (sampling.ts): requests not sampled make no span objects at all.
    sampler: new AlwaysOnSampler(),
    resource: resourceFromAttributes(setup.resource),
    spanLimits: {
      attributeValueLengthLimit: TRACE_LIMITS.attributeValueLengthLimit,
      attributeCountLimit: TRACE_LIMITS.attributeCountLimit,
      eventCountLimit: TRACE_LIMITS.eventCountLimit,
    },
    spanProcessors: [new BatchSpanProcessor({
      exporter,
      maxQueueSize: TRACE_LIMITS.maxQueueSize,
      maxExportBatchSize: TRACE_LIMITS.maxExportBatchSize,
      scheduledDelayMillis: TRACE_LIMITS.scheduledDelayMillis,
      exportTimeoutMillis: TRACE_LIMITS.exportTimeoutMillis,
    })],
  });
}

function otlpExporter(endpoint: string, protocol: 'HTTP' | 'GRPC'): SpanExporter {
  const url = exportUrl(endpoint, protocol);
  const timeoutMillis = TRACE_LIMITS.exportTimeoutMillis;
  const { Grpc: GrpcExporter, Http: HttpExporter } = traceExporterClasses();
  if (protocol === 'HTTP') return new HttpExporter({ url, timeoutMillis });
  // The gRPC exporter speaks TLS for an https URL and plaintext for http (its default credentials by scheme).
  return new GrpcExporter({ url, timeoutMillis });
}
