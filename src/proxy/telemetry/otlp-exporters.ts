/**
 * The OTLP exporter packages (gRPC via @grpc/grpc-js, HTTP protobuf via protobufjs), loaded the
 * first time a config asks for an exporter instead of when the proxy starts: they are ~40 MiB of
 * heap and ~0.3 s of module loading per process, paid by every gateway that exports nothing.
 * Loaded synchronously (their CommonJS builds) because exporters are built while a config compiles.
 */
import { createRequire } from 'node:module';

import type { OTLPLogExporter as LogsGrpcExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import type { OTLPLogExporter as LogsHttpExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import type { OTLPTraceExporter as TraceGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import type { OTLPTraceExporter as TraceHttpExporter } from '@opentelemetry/exporter-trace-otlp-proto';

type TraceGrpc = { readonly OTLPTraceExporter: typeof TraceGrpcExporter };
type TraceHttp = { readonly OTLPTraceExporter: typeof TraceHttpExporter };
type LogsGrpc = { readonly OTLPLogExporter: typeof LogsGrpcExporter };
type LogsHttp = { readonly OTLPLogExporter: typeof LogsHttpExporter };

const loadCommonJs = createRequire(import.meta.url);

export function traceExporterClasses(): { readonly Grpc: TraceGrpc['OTLPTraceExporter']; readonly Http: TraceHttp['OTLPTraceExporter'] } {
  return {
    Grpc: (loadCommonJs('@opentelemetry/exporter-trace-otlp-grpc') as TraceGrpc).OTLPTraceExporter,
    Http: (loadCommonJs('@opentelemetry/exporter-trace-otlp-proto') as TraceHttp).OTLPTraceExporter,
  };
}

export function logExporterClasses(): { readonly Grpc: LogsGrpc['OTLPLogExporter']; readonly Http: LogsHttp['OTLPLogExporter'] } {
  return {
    Grpc: (loadCommonJs('@opentelemetry/exporter-logs-otlp-grpc') as LogsGrpc).OTLPLogExporter,
    Http: (loadCommonJs('@opentelemetry/exporter-logs-otlp-proto') as LogsHttp).OTLPLogExporter,
  };
}
