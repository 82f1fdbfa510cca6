/**
 * A bind's `frontend.tracing` compiled once per config: where spans go (OTLP over HTTP or gRPC),
 * when a request is traced (sampling.ts), which CEL attributes every request span gets and which
 * resource attributes describe the gateway. The tracer provider lives as long as its config: it is
 * shut down (pending spans flushed) when the config is retired after a swap.
 */
import type { Attributes, AttributeValue, Tracer } from '@opentelemetry/api';
import type { SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { attributeValue, compile, type Program } from '../../../cel/index.ts';
import type { TracingPolicy } from '../../../ir/members.ts';
import type * as Provider from './provider.ts';
import { lazyModule } from '../../../common/lazy-module.ts';
import { ALWAYS, compileSampling, emptyActivation, NEVER, type Sampling } from './sampling.ts';
import type { ExportLifecycle } from '../export-lifecycle.ts';

// The OpenTelemetry SDK (sdk-trace, resources, core: ~90 modules): loaded when a config first exports
// traces, at compile time (lazy-module.ts), not by every gateway that traces nothing.
const tracingSdk = lazyModule<typeof Provider>(import.meta.url, './provider.ts');

export interface TracingAttribute {
  readonly name: string;
  readonly program: Program;
}

export interface CompiledTracing {
  readonly tracer: Tracer;
  readonly provider: TracerProvider;
  /** Requests without a trace of their own. */
  readonly random: Sampling;
  /** Requests whose client sampled their trace. */
  readonly client: Sampling;
  /** Evaluated when the request ends; a failing expression drops its attribute only. */
  readonly attributes: readonly TracingAttribute[];
  /** Traced requests hold their config (and so its provider) until their span has ended. */
  readonly lifecycle: ExportLifecycle | undefined;
}

export interface TracingDeps {
  /** The OTLP server's URL (`http(s)://host:port[/path]`); throws when the policy's backend cannot be resolved. */
  readonly endpoint: () => string;
  readonly lifecycle?: ExportLifecycle;
  /** Tests: spans go here instead of an OTLP exporter. */
  readonly exporter?: SpanExporter;
}

/** The instrumentation scope spans are reported under. */
export const TRACER_NAME = 'switchboard';

/** Undefined (reported) when the OTLP endpoint cannot be resolved: the bind serves untraced. */
export function compileTracing(policy: TracingPolicy, deps: TracingDeps, onError: (message: string) => void): CompiledTracing | undefined {
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
  const attributes = (policy.attributes ?? []).flatMap((a) => {
    const program = expression(`attribute ${a.name}`, a.expression);
    return program ? [{ name: a.name, program }] : [];
  });
  const provider = tracingSdk().createTracerProvider({
    endpoint,
    protocol: policy.protocol ?? 'HTTP',
    resource: resourceAttributes(policy.resources ?? [], expression),
    ...(deps.exporter ? { exporter: deps.exporter } : {}),
  });
  deps.lifecycle?.onRetire(() => void provider.shutdown());
  return {
    tracer: provider.getTracer(TRACER_NAME),
    provider,
    random: compileSampling(policy.randomSampling, NEVER, (m) => onError(`randomSampling: ${m}`)),
    client: compileSampling(policy.clientSampling, ALWAYS, (m) => onError(`clientSampling: ${m}`)),
    attributes,
    lifecycle: deps.lifecycle,
  };
}

/**
 * `resources`: evaluated once, with no request (literals and functions of them); an expression
 * that fails is left out. `service.name` is `switchboard` unless the policy names it.
 */
function resourceAttributes(resources: readonly { name: string; expression: string }[], expression: (what: string, text: string) => Program | undefined): Attributes {
  const out: Attributes = { 'service.name': TRACER_NAME };
  const activation = emptyActivation();
  for (const r of resources) {
    const program = expression(`resource ${r.name}`, r.expression);
    if (!program) continue;
    const value = asAttribute(attributeValue(program, activation));
    if (value !== undefined) out[r.name] = value;
  }
  return out;
}

/** A CEL result as a span attribute: scalars as they are, homogeneous scalar lists, anything else as JSON text. */
export function asAttribute(value: unknown): AttributeValue | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return value as string[];
    if (value.every((v) => typeof v === 'number')) return value as number[];
    if (value.every((v) => typeof v === 'boolean')) return value as boolean[];
  }
  return JSON.stringify(value);
}
