import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../common/logger.ts';
import { isConnectFailure, upstreamFailure, type ProxyError } from '../http/errors.ts';
import { applyHeaderModifier } from '../http/header-modifier.ts';
import { endToEndResponseHeaders, type HeaderMap } from '../http/headers.ts';
import { preservesHeaderCase, withRawCase } from '../policies/frontend/header-case.ts';
import type { RequestPolicyContext } from '../policies/request-context.ts';
import { rewrittenHost } from '../policies/traffic/host-rewrite/host.ts';
import { RetryBudget } from '../policies/traffic/retry/attempts.ts';
import { FilteredResponseWriter } from './filtered-response.ts';
import type { ProxyMetrics } from '../telemetry/metrics.ts';
import { requestBody, sendDirect, sendError, type DownstreamRequest, type DownstreamResponse } from '../http/downstream.ts';
import { startMirrors } from './mirror.ts';
import { httpAttempts, type UpstreamAttempts } from '../telemetry/tracing/upstream.ts';
import type { UpstreamTarget } from '../backends/backend.ts';
import type { Resolution } from './resolve.ts';

export type Forward = Extract<Resolution, { kind: 'forward' }>;
/** A forward to an endpoint (not to an in-process handler). */
export type UpstreamForward = Forward & { readonly target: UpstreamTarget };

export interface Telemetry {
  readonly metrics: ProxyMetrics;
  readonly logger: Logger;
}

/** Status recorded when the client went away before the response completed (nginx's convention). */
export const CLIENT_CLOSED = 499;

/**
 * One proxied request: dispatches upstream through undici's handler API and streams the response
 * back with backpressure in both directions, enforcing the rule's timeouts. Every path ends in
 * exactly one call of `onDone` with the status the client saw.
 */
export class Exchange implements Dispatcher.DispatchHandler {
  readonly #req: DownstreamRequest;
  readonly #res: DownstreamResponse;
  readonly #fwd: UpstreamForward;
  readonly #telemetry: Telemetry;
  readonly #onDone: (status: number, bytes: number) => void;
  /** Present when traffic policies ran: buffered body, response mutations, policy timeout. */
  readonly #policy: RequestPolicyContext | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #timers: NodeJS.Timeout[] = [];
  #finished = false;
  #awaitingDrain = false;
  #bytes = 0;
  #status = 0;
  /** Policy hooks: retries (traffic.retry) and response filters (transformation body, ext_proc). */
  #retry: RetryBudget | undefined;
  #retrying = false;
  #request: Dispatcher.DispatchOptions | undefined;
  #filtered: FilteredResponseWriter | undefined;
  /** Traced requests only: one span per upstream attempt (telemetry/tracing). */
  readonly #attempts: UpstreamAttempts | undefined;

  constructor(
    req: DownstreamRequest,
    res: DownstreamResponse,
    fwd: UpstreamForward,
    telemetry: Telemetry,
    onDone: (status: number, bytes: number) => void,
    policy?: RequestPolicyContext,
  ) {
    this.#policy = policy;
    this.#req = req;
    this.#res = res;
    this.#fwd = fwd;
    this.#telemetry = telemetry;
    this.#onDone = onDone;
    this.#attempts = httpAttempts(req.method ?? 'GET', fwd.backend.key, fwd.target.authority);
  }

  start(): void {
    const { rule, target, path, headers, filters } = this.#fwd;
    const method = this.#req.method ?? 'GET';
    const requestTimeoutMs = this.#fwd.traffic?.requestTimeoutMs ?? rule.requestTimeoutMs;
    // Fault-injected delays already spent part of the request timeout (SPEC.md traffic.delay).
    const timeLeftMs = requestTimeoutMs === undefined ? undefined : requestTimeoutMs - (this.#policy?.upstream.delayedMs ?? 0);
    if (timeLeftMs !== undefined && timeLeftMs <= 0) return this.#fail({ code: 'REQUEST_TIMEOUT' });
    if (timeLeftMs !== undefined) this.#arm(timeLeftMs, { code: 'REQUEST_TIMEOUT' });
    if (rule.backendTimeoutMs !== undefined) this.#arm(rule.backendTimeoutMs, { code: 'BACKEND_TIMEOUT', backend: this.#fwd.backend.key });
    // Backend policy http.requestTimeout: a deadline for the upstream's response.
    const backendDeadlineMs = this.#fwd.backendRuntime?.requestTimeoutMs;
    if (backendDeadlineMs !== undefined) this.#arm(backendDeadlineMs, { code: 'BACKEND_TIMEOUT', backend: this.#fwd.backend.key });
    this.#res.on('close', () => {
      if (!this.#finished) this.#abort(new Error('client closed the connection'), CLIENT_CLOSED);
    });
    const buffered = this.#policy?.bufferedBody;
    const processed = this.#policy?.upstream.bodyStream;
    let body: Readable | Buffer | null = processed ? Readable.from(processed) : buffered ?? requestBody(this.#req);
    if (filters.mirrors.length > 0) body = startMirrors(filters.mirrors, { method, path, headers, body: buffered ? Readable.from([buffered]) : (body as Readable | null) }, this.#telemetry.logger);
    const upstream = this.#policy?.upstream;
    if (upstream?.hostRewrite && !filters.rewrite?.hostname) {
      const host = rewrittenHost(upstream.hostRewrite, target.authority, (this.#req.headers[':authority'] as string | undefined) ?? this.#req.headers.host);
      if (host !== undefined) headers.host = host;
    }
    if (upstream?.retry) this.#retry = new RetryBudget(upstream.retry, body === null || Buffer.isBuffer(body));
    this.#request = { method: method as Dispatcher.HttpMethod, path, headers: preservesHeaderCase(this.#req) ? withRawCase(headers, this.#req.rawHeaders) : headers, body };
    this.#attempts?.begin(this.#request.headers as Record<string, unknown>);
    target.dispatcher.dispatch(this.#request, this);
  }

  /** Sends the request again after the policy's backoff; its body is null or a Buffer (RetryBudget). */
  #retryLater(): void {
    this.#retrying = false;
    const timer = setTimeout(() => {
      if (this.#finished) return;
      this.#attempts?.begin(this.#request!.headers as Record<string, unknown>);
      this.#fwd.target.dispatcher.dispatch(this.#request!, this);
    }, this.#retry!.backoffMs);
    this.#timers.push(timer);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#finished) controller.abort(new Error('request already answered'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, upstreamHeaders: IncomingHttpHeaders): void {
    if (this.#finished) return;
    const headers: HeaderMap = endToEndResponseHeaders(upstreamHeaders);
    for (const m of this.#fwd.filters.responseHeaders) applyHeaderModifier(headers, m, 'response');
    if (this.#retry?.takeForStatus(statusCode)) {
      // Drain this answer (keeping the connection) and try again once it ends.
      this.#retrying = true;
      this.#attempts?.end({ status: statusCode });
      return;
    }
    if (this.#policy) for (const mutate of this.#policy.responseMutations) mutate(headers, statusCode);
    this.#status = statusCode;
    if (this.#policy && this.#policy.responseFilters.length > 0) {
      const method = this.#req.method;
      this.#filtered = new FilteredResponseWriter({
        res: this.#res,
        response: { status: statusCode, headers },
        filters: this.#policy.responseFilters,
        bodiless: method === 'HEAD' || statusCode === 204 || statusCode === 304,
        finished: () => this.#finished,
        complete: (status, bytes) => {
          this.#bytes = bytes;
          this.#complete(status);
        },
        abortUpstream: () => controller.abort(new Error('a response policy answered')),
      });
      return;
    }
    try {
      this.#res.writeHead(statusCode, preservesHeaderCase(this.#req) ? withRawCase(headers, controller.rawHeaders) : headers);
    } catch (err) {
      // Headers node refuses (invalid characters from upstream) must not crash the process.
      this.#telemetry.logger.warn({ err: (err as Error).message, backend: this.#fwd.backend.key }, 'invalid upstream response headers');
      this.#fail({ code: 'UPSTREAM_RESET', backend: this.#fwd.backend.key, cause: 'invalid response headers' });
      controller.abort(err as Error);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#finished || this.#retrying) return;
    if (this.#filtered) return this.#filtered.push(controller, chunk);
    this.#bytes += chunk.length;
    if (!this.#res.write(chunk) && !this.#awaitingDrain) {
      this.#awaitingDrain = true;
      controller.pause();
      this.#res.once('drain', () => {
        this.#awaitingDrain = false;
        controller.resume();
      });
    }
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    if (this.#finished) return;
    if (this.#retrying) return this.#retryLater();
    if (this.#filtered) return this.#filtered.end(trailers);
    let hasTrailers = false;
    for (const _ in trailers) {
      hasTrailers = true;
      break;
    }
    if (hasTrailers) this.#res.addTrailers(endToEndResponseHeaders(trailers));
    this.#res.end();
    this.#complete(this.#status);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#finished) return;
    const failure = upstreamFailure(this.#fwd.backend.key, err);
    this.#attempts?.end({ error: err });
    if (isConnectFailure(failure)) this.#telemetry.metrics.connectError(this.#fwd.backend.key);
    if (this.#retrying || (this.#status === 0 && isConnectFailure(failure) && this.#retry?.takeForConnectFailure())) return this.#retryLater();
    // A request-body policy (ext_proc) that answered or failed mid-stream chose the response.
    const answer = this.#policy?.upstream.answer;
    if (answer && !this.#res.headersSent) return this.#complete(sendDirect(this.#res, answer, []));
    this.#fail(failure);
  }

  #arm(ms: number, error: ProxyError): void {
    const timer = setTimeout(() => {
      if (this.#finished) return;
      // Answer first: aborting reports back synchronously through onResponseError.
      this.#fail(error);
      this.#controller?.abort(new Error(error.code));
    }, ms);
    this.#timers.push(timer);
  }

  #abort(reason: Error, status: number): void {
    this.#complete(status);
    this.#controller?.abort(reason);
  }

  #fail(error: ProxyError): void {
    this.#complete(sendError(this.#res, error));
  }

  #complete(status: number): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#filtered?.cancel(new Error('exchange finished'));
    for (const t of this.#timers) clearTimeout(t);
    this.#attempts?.end(this.#status !== 0 ? { status: this.#status } : { error: new Error(`no upstream answer (the client got ${status})`) });
    this.#onDone(status, this.#bytes);
  }
}
