/**
 * The spans of a request's upstream attempts: one CLIENT span per attempt (the first send, each
 * `traffic.retry` resend, each failover to another provider or replica), each with its own
 * `traceparent` written into that attempt's request headers. Made only for traced requests.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import { currentTrace, endCall, type RequestTrace } from './request-trace.ts';

export class UpstreamAttempts {
  readonly #trace: RequestTrace;
  readonly #name: string;
  readonly #attributes: Attributes;
  #span: Span | undefined;
  #count = 0;

  constructor(requestTrace: RequestTrace, name: string, attributes: Attributes) {
    this.#trace = requestTrace;
    this.#name = name;
    this.#attributes = attributes;
  }

  /** Starts the next attempt's span (ending one still open) and writes its trace headers into `headers`. */
  begin(headers: Record<string, unknown>, attributes?: Attributes): Span {
    this.#span?.end();
    const resend = this.#count++;
    const span = this.#trace.startCall(this.#name, { ...this.#attributes, ...attributes, ...(resend > 0 ? { 'http.request.resend_count': resend } : {}) }, headers);
    this.#span = span;
    return span;
  }

  /** The current attempt is over: with the upstream's status or the error that ended it. */
  end(outcome: { status?: number; error?: unknown }): void {
    const span = this.#span;
    if (span === undefined) return;
    this.#span = undefined;
    endCall(span, outcome);
  }
}

/** Attempt spans for the current request, or undefined when it is not traced (nothing made). */
export function upstreamAttempts(name: string, attributes: Attributes): UpstreamAttempts | undefined {
  const requestTrace = currentTrace();
  return requestTrace === undefined ? undefined : new UpstreamAttempts(requestTrace, name, attributes);
}

/** Attempt spans of a proxied HTTP request (pipeline/exchange.ts): `{method}` CLIENT spans to the backend. */
export function httpAttempts(method: string, backend: string, authority: string): UpstreamAttempts | undefined {
  const requestTrace = currentTrace();
  if (requestTrace === undefined) return undefined;
  return new UpstreamAttempts(requestTrace, method, { 'http.request.method': method, 'server.address': authority, 'switchboard.backend': backend });
}
