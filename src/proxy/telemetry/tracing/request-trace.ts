/**
 * One traced request: its SERVER span (parent: the client's W3C `traceparent`, when it sent a
 * sampled one) and the CLIENT spans of what leaves the process on its behalf (upstream attempts,
 * policy services, MCP targets, LLM providers), each of which carries its own `traceparent`
 * upstream. The trace travels with the request's async context (AsyncLocalStorage), entered only
 * for traced requests: code anywhere on the request's path asks `currentTrace()` and gets
 * undefined, at the cost of one lookup, when the request is not traced.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags,
  type Attributes, type Context, type Span, type TextMapGetter, type TextMapSetter,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { attributeValue, type CelInput, type LlmInput, type McpInput } from '../../../cel/index.ts';
import type { DownstreamRequest } from '../../http/downstream.ts';
import { currentScope, requestActivation, RequestFacts, runInScope, type EndNames } from '../request-facts.ts';
import { asAttribute, type CompiledTracing } from './compile.ts';
import { sampled } from './sampling.ts';

const propagator = new W3CTraceContextPropagator();
const fromHeaders: TextMapGetter<IncomingHttpHeaders> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};
const intoHeaders: TextMapSetter<Record<string, unknown>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};
const PROPAGATED = new Set(['traceparent', 'tracestate']);

/** The trace of the request this code runs for; undefined when it is not traced. */
export function currentTrace(): RequestTrace | undefined {
  return currentScope()?.trace as RequestTrace | undefined;
}

/** Runs the rest of a traced request inside its trace's async context (its scope, request-facts.ts). */
export function runTraced<T>(requestTrace: RequestTrace, fn: () => T): T {
  return runInScope({ trace: requestTrace, facts: requestTrace.facts }, fn);
}

/** What the request span is named and labelled with when it ends. */
export type RequestNames = EndNames;

/** Starts the request span when sampling says so; undefined (nothing made) otherwise. */
export function startRequestTrace(tracing: CompiledTracing, req: DownstreamRequest, scheme: 'http' | 'https'): RequestTrace | undefined {
  const headers = req.headers;
  let parent: Context = ROOT_CONTEXT;
  let sampling = tracing.random;
  if (headers.traceparent !== undefined) {
    const extracted = propagator.extract(ROOT_CONTEXT, headers, fromHeaders);
    const client = trace.getSpanContext(extracted);
    if (client && isSpanContextValid(client)) {
      // Parent-based: the client's decision not to sample is followed.
      if ((client.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
      parent = extracted;
      sampling = tracing.client;
    }
  }
  if (!sampled(sampling, () => requestActivation(req, scheme, undefined))) return undefined;
  return new RequestTrace(tracing, parent, req, scheme);
}

export class RequestTrace {
  readonly span: Span;
  readonly #tracing: CompiledTracing;
  readonly #context: Context;
  readonly #req: DownstreamRequest;
  readonly #scheme: 'http' | 'https';
  /** What the CEL attributes see at the end (`llm.*`, `mcp.*`, identities); shared with the access log. */
  readonly facts = new RequestFacts();
  #ended = false;

  constructor(tracing: CompiledTracing, parent: Context, req: DownstreamRequest, scheme: 'http' | 'https') {
    this.#tracing = tracing;
    this.#req = req;
    this.#scheme = scheme;
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const host = req.headers[':authority'] ?? req.headers.host;
    const agent = req.headers['user-agent'];
    this.span = tracing.tracer.startSpan(method, {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        'url.path': query < 0 ? url : url.slice(0, query),
        'url.scheme': scheme,
        'network.protocol.version': req.httpVersion,
        ...(typeof host === 'string' ? { 'server.address': host } : {}),
        ...(req.socket.remoteAddress !== undefined ? { 'client.address': req.socket.remoteAddress } : {}),
        ...(typeof agent === 'string' ? { 'user_agent.original': agent } : {}),
      },
    }, parent);
    this.#context = trace.setSpan(parent, this.span);
    tracing.lifecycle?.enter();
  }

  /** Attributes on the request span (GenAI and MCP facts learnt on the way). */
  set(attributes: Attributes): void {
    if (!this.#ended) this.span.setAttributes(attributes);
  }

  /** LLM facts the CEL attributes see as `llm.*` when the request ends. */
  noteLlm(llm: LlmInput): void {
    this.facts.noteLlm(llm);
  }

  /** Where the CEL attributes read the request from when policies ran (`jwt`, `apiKey`, `extauthz` …). */
  useCel(source: () => CelInput): void {
    this.facts.useCel(source);
  }

  /** MCP facts the CEL attributes see as `mcp.*`. */
  noteMcp(mcp: McpInput): void {
    this.facts.noteMcp(mcp);
  }

  /**
   * A CLIENT span under the request span for a call that leaves the process; with `headers`, the
   * call's `traceparent`/`tracestate` are written there (any the client sent are replaced).
   */
  startCall(name: string, attributes: Attributes, headers?: Record<string, unknown>): Span {
    const span = this.#tracing.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, this.#context);
    if (headers) inject(span, headers);
    return span;
  }

  /**
   * A span that outlives the request (a Realtime session, an MCP server stream after its request
   * span ended) holds the request's config — and so the tracer provider that exports it — until
   * the returned release is called (at most the drain period after the config is retired).
   */
  hold(): () => void {
    const lifecycle = this.#tracing.lifecycle;
    if (lifecycle === undefined) return () => undefined;
    lifecycle.enter();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      lifecycle.leave();
    };
  }

  /** Ends the request span with what the client saw; runs once. */
  end(status: number, names: RequestNames): void {
    if (this.#ended) return;
    this.#ended = true;
    const span = this.span;
    const method = this.#req.method ?? 'GET';
    if (names.route !== '') span.updateName(`${method} ${names.route}`);
    span.setAttributes({
      'http.response.status_code': status,
      ...(names.gateway !== '' ? { 'switchboard.gateway': names.gateway } : {}),
      ...(names.listener !== '' ? { 'switchboard.listener': names.listener } : {}),
      ...(names.route !== '' ? { 'switchboard.route': names.route } : {}),
      ...(names.backend !== '' ? { 'switchboard.backend': names.backend } : {}),
    });
    // HTTP semconv: 5xx is a server span error, 4xx is the client's.
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (this.#tracing.attributes.length > 0) {
      const activation = requestActivation(this.#req, this.#scheme, { status, names, facts: this.facts });
      for (const { name, program } of this.#tracing.attributes) {
        const value = asAttribute(attributeValue(program, activation));
        if (value !== undefined) span.setAttribute(name, value);
      }
    }
    span.end();
    this.#tracing.lifecycle?.leave();
  }
}

/** Writes `span`'s W3C trace context into outgoing headers, replacing the client's. */
export function inject(span: Span, headers: Record<string, unknown>): void {
  for (const name of Object.keys(headers)) if (PROPAGATED.has(name.toLowerCase())) delete headers[name];
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, intoHeaders);
}

/** Ends a CLIENT span: an error, or an HTTP status of 500 or more, marks it failed. */
export function endCall(span: Span, outcome: { status?: number; error?: unknown }): void {
  if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
  if (outcome.error !== undefined) {
    const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    span.setAttribute('error.type', outcome.error instanceof Error ? outcome.error.name : 'error');
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  } else if (outcome.status !== undefined && outcome.status >= 500) {
    span.setAttribute('error.type', String(outcome.status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * The policy-call hook (extAuth, extProc, rate-limit service, token endpoints, guard services): a
 * CLIENT span named `name` around `call` when the request is traced, `call` itself otherwise.
 * `call` gets the span's trace headers to send when its protocol carries headers.
 */
export function traceCall<T>(name: string, attributes: Attributes, call: (traceHeaders: Record<string, string> | undefined) => Promise<T>): Promise<T> {
  const requestTrace = currentTrace();
  if (requestTrace === undefined) return call(undefined);
  const headers: Record<string, string> = {};
  const span = requestTrace.startCall(name, attributes, headers);
  return call(headers).then(
    (value) => {
      endCall(span, {});
      return value;
    },
    (error: unknown) => {
      endCall(span, { error });
      throw error;
    },
  );
}

/**
 * The start of a policy call that lasts beyond one promise (an ext_proc session): a CLIENT span
 * under the request span, ended with `endCall`; undefined when the request is not traced.
 */
export function startPolicyCall(name: string, attributes: Attributes): Span | undefined {
  return currentTrace()?.startCall(name, attributes);
}
