/**
 * A test OTLP receiver: the trace and logs collector services over OTLP/HTTP (`/v1/traces`,
 * `/v1/logs`; binary protobuf or OTLP's JSON encoding, whose trace and span ids are hex) and
 * OTLP/gRPC, decoding with code generated from the official opentelemetry-proto definitions
 * (test/otlp/proto, test/otlp/gen). What it received is kept as
 * flat spans and log records with plain attribute values, for assertions.
 */
import { create, fromBinary, fromJson, toBinary, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import type { AnyValue, KeyValue } from './gen/opentelemetry/proto/common/v1/common_pb.js';
import {
  ExportTraceServiceRequestSchema, ExportTraceServiceResponseSchema, TraceService, type ExportTraceServiceRequest,
} from './gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import {
  ExportLogsServiceRequestSchema, ExportLogsServiceResponseSchema, LogsService, type ExportLogsServiceRequest,
} from './gen/opentelemetry/proto/collector/logs/v1/logs_service_pb.js';
import { startGrpcServer, startHttpServer, type RunningServer } from '../ext/servers.ts';

export type Plain = string | number | boolean | bigint | null | Plain[] | { [key: string]: Plain };

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** opentelemetry.proto.trace.v1.Span.SpanKind: 2 SERVER, 3 CLIENT. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, Plain>>;
  readonly resource: Readonly<Record<string, Plain>>;
  readonly scope: string;
  /** opentelemetry.proto.trace.v1.Status.StatusCode: 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly traceState: string;
}

export interface ReceivedLog {
  readonly body: Plain;
  readonly attributes: Readonly<Record<string, Plain>>;
  readonly resource: Readonly<Record<string, Plain>>;
  readonly traceId: string;
  readonly spanId: string;
}

export interface OtlpReceiver {
  /** Where exporters send: `http://127.0.0.1:<port>` (append `/v1/traces` yourself only if you want to). */
  readonly url: string;
  readonly protocol: 'HTTP' | 'GRPC';
  readonly spans: ReceivedSpan[];
  readonly logs: ReceivedLog[];
  /** The content-type of every OTLP/HTTP request received (empty for gRPC). */
  readonly contentTypes: string[];
  /** Resolves once `predicate` holds for the spans received (polls; rejects after `timeoutMs`). */
  waitForSpans(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(protocol: 'HTTP' | 'GRPC'): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const contentTypes: string[] = [];
  const onTraces = (request: ExportTraceServiceRequest) => spans.push(...flattenSpans(request));
  const onLogs = (request: ExportLogsServiceRequest) => logs.push(...flattenLogs(request));
  let server: RunningServer;
  if (protocol === 'GRPC') {
    server = await startGrpcServer((router) => {
      router.service(TraceService, {
        export: (request) => {
          onTraces(request);
          return create(ExportTraceServiceResponseSchema);
        },
      });
      router.service(LogsService, {
        export: (request) => {
          onLogs(request);
          return create(ExportLogsServiceResponseSchema);
        },
      });
    });
  } else {
    server = await startHttpServer((req, body, res) => {
      const type = req.headers['content-type'] ?? '';
      contentTypes.push(type);
      const json = type.startsWith('application/json');
      if (req.method !== 'POST' || (!json && !type.startsWith('application/x-protobuf'))) {
        res.writeHead(415).end();
        return;
      }
      const decode = <S extends DescMessage>(schema: S): MessageShape<S> => (json ? fromJson(schema, otlpJsonIds(JSON.parse(body.toString('utf8')) as JsonValue)) : fromBinary(schema, body));
      let answer: Uint8Array;
      if (req.url === '/v1/traces') {
        onTraces(decode(ExportTraceServiceRequestSchema));
        answer = toBinary(ExportTraceServiceResponseSchema, create(ExportTraceServiceResponseSchema));
      } else if (req.url === '/v1/logs') {
        onLogs(decode(ExportLogsServiceRequestSchema));
        answer = toBinary(ExportLogsServiceResponseSchema, create(ExportLogsServiceResponseSchema));
      } else {
        res.writeHead(404).end();
        return;
      }
      // The response in the request's encoding (OTLP/HTTP); an empty message is `{}` in JSON.
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(answer);
    });
  }
  return {
    url: server.url,
    protocol,
    spans,
    logs,
    contentTypes,
    async waitForSpans(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`OTLP receiver: spans not received in ${timeoutMs} ms; got ${JSON.stringify(spans.map((s) => s.name))}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () => server.close(),
  };
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/**
 * OTLP's JSON encoding departs from the protobuf JSON mapping in one point: trace and span ids are
 * hex, not base64. Turned into base64 here so the generated code's fromJson reads them.
 */
function otlpJsonIds(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(otlpJsonIds);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, JsonValue> = {};
  for (const [key, v] of Object.entries(value)) out[key] = ID_FIELDS.has(key) && typeof v === 'string' ? Buffer.from(v, 'hex').toString('base64') : otlpJsonIds(v);
  return out;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

export function plainAttributes(attributes: readonly KeyValue[]): Record<string, Plain> {
  const out: Record<string, Plain> = {};
  for (const kv of attributes) out[kv.key] = plain(kv.value);
  return out;
}

function plain(value: AnyValue | undefined): Plain {
  const v = value?.value;
  switch (v?.case) {
    case 'stringValue': case 'boolValue': case 'doubleValue': return v.value;
    case 'intValue': return Number(v.value);
    case 'arrayValue': return v.value.values.map(plain);
    case 'kvlistValue': return plainAttributes(v.value.values);
    case 'bytesValue': return hex(v.value);
    default: return null;
  }
}

function flattenSpans(request: ExportTraceServiceRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans) {
    const resource = plainAttributes(rs.resource?.attributes ?? []);
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        out.push({
          traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), name: s.name, kind: s.kind,
          attributes: plainAttributes(s.attributes), resource, scope: ss.scope?.name ?? '', status: s.status?.code ?? 0, traceState: s.traceState,
        });
      }
    }
  }
  return out;
}

function flattenLogs(request: ExportLogsServiceRequest): ReceivedLog[] {
  const out: ReceivedLog[] = [];
  for (const rl of request.resourceLogs) {
    const resource = plainAttributes(rl.resource?.attributes ?? []);
    for (const sl of rl.scopeLogs) {
      for (const l of sl.logRecords) out.push({ body: plain(l.body), attributes: plainAttributes(l.attributes), resource, traceId: hex(l.traceId), spanId: hex(l.spanId) });
    }
  }
  return out;
}
