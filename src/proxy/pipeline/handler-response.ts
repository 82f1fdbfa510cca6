/**
 * The response an in-process backend handler (ai, mcp) writes to, when the pipeline has work of its
 * own on it: response effects (route ResponseHeaderModifier filters, then the traffic policies'
 * response mutations — CORS, headerModifiers.response, rate-limit headers …) applied to the head
 * the handler writes, and the pipeline's deadline. When the deadline passes before the head went
 * out, the pipeline answers and `cut()`s the handler off: to the handler this looks exactly like a
 * client that went away (a `close` before the response ended), so the abort paths the LLM and MCP
 * handlers already have for that stop their upstream work. Requests to Service backends, and
 * handler requests with nothing to apply, never get one.
 *
 * For handlers that take them (`BackendHandler.filtersResponses`), the request's ResponseFilters
 * (transformation `response.body`, ext_proc response phases) run on the answer as they do on a
 * Service's: the handler's head and writes feed the same FilteredResponseWriter the Exchange uses,
 * as if the handler were the upstream, with backpressure back to the handler. The gateway's own
 * refusals a handler writes (`DownstreamResponse.gatewayAnswer`) skip them, as the pipeline's own errors do.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { applyHeaderModifier, type CompiledHeaderModifier } from '../http/header-modifier.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { ResponseFilter, ResponseMutation } from '../policies/context.ts';
import type { DownstreamResponse } from '../http/downstream.ts';
import { FilteredResponseWriter } from './filtered-response.ts';
import type { ClientFormat } from '../http/error-format.ts';

/** What a handler's answer needs to pass through the request's response filters. */
export interface HandlerFiltering {
  /** The request's list, read when the head is written: backend steps the handler runs may add to it. */
  readonly filters: readonly ResponseFilter[];
  readonly method: string;
  /** Once, with the status and bytes the client got, when a filtered answer is over. */
  complete(status: number, bytes: number): void;
  /** The handler's clients' error format: a filter's failure is rendered in it (docs/errors.md). */
  readonly format?: ClientFormat;
}

export class HandlerResponse implements DownstreamResponse {
  readonly #res: DownstreamResponse;
  readonly #headerFilters: readonly CompiledHeaderModifier[];
  readonly #mutations: readonly ResponseMutation[];
  readonly #onHead: () => void;
  readonly #filtering: HandlerFiltering | undefined;
  #closeListeners: (() => void)[] | undefined;
  /** Set once the pipeline answered instead: the handler's writes go nowhere. */
  #cut = false;
  /** The next head is the gateway's own answer (gatewayAnswer()). */
  #gatewayAnswer = false;
  /** Present once the handler's head went into the response filters. */
  #filtered: FilteredResponseWriter | undefined;
  #handlerEnded = false;
  /** The filtered answer is over (the filters are through) or was given up (client gone, handler failed): nothing more is written. */
  #over = false;
  /** The status of the filtered answer went to the pipeline. */
  #reported = false;
  #paused = false;
  #drainListeners: (() => void)[] = [];
  #trailers: IncomingHttpHeaders | undefined;
  /** Holds the handler back while the filters' input is full (its write() returns false until drain). */
  readonly #flow = {
    pause: () => {
      this.#paused = true;
    },
    resume: () => {
      this.#paused = false;
      this.#drain();
    },
  };

  constructor(res: DownstreamResponse, headerFilters: readonly CompiledHeaderModifier[], mutations: readonly ResponseMutation[], onHead: () => void, filtering?: HandlerFiltering) {
    this.#res = res;
    this.#headerFilters = headerFilters;
    this.#mutations = mutations;
    this.#onHead = onHead;
    this.#filtering = filtering;
  }

  /** The handler never sent a head once cut off: it must not try to answer or cut the pipeline's answer. */
  get headersSent(): boolean {
    return !this.#cut && (this.#filtered !== undefined || this.#res.headersSent);
  }

  get writableEnded(): boolean {
    return !this.#cut && (this.#filtered !== undefined ? this.#handlerEnded : this.#res.writableEnded);
  }

  /** The next head is the gateway's own refusal or failure, not the backend's answer: no response filter runs on it. */
  gatewayAnswer(): void {
    this.#gatewayAnswer = true;
  }

  /**
   * The handler's `done`. With a filtered answer under way the filters report what the client got
   * once they are through; a handler that stops before ending its answer (client gone, a failure)
   * ends the filtered answer with it.
   */
  handlerDone(status: number, bytes: number): void {
    if (this.#filtered === undefined) return this.#filtering!.complete(status, bytes);
    if (this.#reported || (this.#handlerEnded && !this.#over)) return;
    this.#giveUp(new Error('the backend handler stopped'));
    this.#report(status, bytes);
  }

  #giveUp(reason: Error): void {
    if (this.#over) return;
    this.#over = true;
    this.#filtered?.cancel(reason);
    this.#drain();
  }

  #report(status: number, bytes: number): void {
    if (this.#reported) return;
    this.#reported = true;
    this.#filtering!.complete(status, bytes);
  }

  get cut(): boolean {
    return this.#cut;
  }

  writeHead(status: number, headers: OutgoingHttpHeaders): this {
    if (this.#cut) return this;
    const map: HeaderMap = {};
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) continue;
      map[name.toLowerCase()] = typeof value === 'number' ? String(value) : value;
    }
    for (const m of this.#headerFilters) applyHeaderModifier(map, m, 'response');
    for (const mutate of this.#mutations) mutate(map, status);
    this.#onHead();
    const filtering = this.#filtering;
    if (filtering !== undefined && filtering.filters.length > 0 && !this.#gatewayAnswer) {
      this.#filtered = this.#filter(filtering, status, map);
      return this;
    }
    this.#res.writeHead(status, map);
    return this;
  }

  write(chunk: Buffer): boolean {
    if (this.#cut) return true;
    if (this.#filtered === undefined) return this.#res.write(chunk);
    if (this.#over) return true;
    this.#filtered.push(this.#flow, chunk);
    return !this.#paused;
  }

  end(chunk?: string | Buffer): this {
    if (this.#cut) return this;
    if (this.#filtered !== undefined) {
      if (this.#over || this.#handlerEnded) return this;
      if (chunk !== undefined && chunk.length > 0) this.#filtered.push(this.#flow, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      this.#handlerEnded = true;
      this.#filtered.end(this.#trailers ?? {});
      return this;
    }
    if (chunk === undefined) this.#res.end();
    else (this.#res as { end(chunk: string | Buffer): unknown }).end(chunk);
    return this;
  }

  addTrailers(headers: OutgoingHttpHeaders): void {
    if (this.#cut) return;
    // A filtered answer's trailers go in with the end of its body (ext_proc may change them).
    if (this.#filtered !== undefined) this.#trailers = headers as IncomingHttpHeaders;
    else this.#res.addTrailers(headers);
  }

  destroy(error?: Error): this {
    if (this.#cut) return this;
    // The handler reports its status after cutting (handlerDone).
    if (this.#filtered !== undefined) this.#giveUp(error ?? new Error('the backend handler cut its answer'));
    this.#res.destroy(error);
    return this;
  }

  once(event: 'drain', listener: () => void): this {
    if (this.#cut || this.#over) listener();
    else if (this.#filtered !== undefined) this.#drainListeners.push(listener);
    else this.#res.once(event, listener);
    return this;
  }

  on(event: 'close', listener: () => void): this {
    if (this.#cut) {
      queueMicrotask(listener);
      return this;
    }
    if (this.#closeListeners === undefined) {
      this.#closeListeners = [];
      this.#res.on('close', () => this.#close());
    }
    this.#closeListeners.push(listener);
    return this;
  }

  /** The pipeline answers instead: the handler sees its client go away and stops its upstream work. */
  cutOff(): void {
    if (this.#cut) return;
    this.#cut = true;
    this.#close();
  }

  /** The handler's head and writes become the filters' input, as an upstream response's are in the Exchange. */
  #filter(filtering: HandlerFiltering, status: number, headers: HeaderMap): FilteredResponseWriter {
    return new FilteredResponseWriter({
      res: this.#res,
      response: { status, headers },
      filters: filtering.filters,
      bodiless: filtering.method === 'HEAD' || status === 204 || status === 304,
      ...(filtering.format !== undefined ? { format: filtering.format } : {}),
      finished: () => this.#over,
      complete: (final, bytes) => {
        if (this.#over) return;
        this.#over = true;
        this.#drain();
        this.#report(final, bytes);
      },
      // A filter answered instead or failed: the handler sees its client go and stops its upstream work.
      abortUpstream: () => {
        if (!this.#handlerEnded) this.cutOff();
      },
    });
  }

  #drain(): void {
    const listeners = this.#drainListeners;
    this.#drainListeners = [];
    for (const listener of listeners) listener();
  }

  #close(): void {
    const listeners = this.#closeListeners;
    this.#closeListeners = [];
    for (const listener of listeners ?? []) listener();
  }
}
