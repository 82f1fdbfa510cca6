/**
 * The response side of traffic policies that work asynchronously or rewrite the body
 * (transformation `response.body`, ext_proc). The Exchange hands the upstream response here
 * instead of writing it: header filters run first (and may answer instead), then the body flows
 * through each body filter in turn, with backpressure back to the upstream. Only requests whose
 * policies registered a ResponseFilter take this path. In-process handlers' answers (ai) take it
 * too, through HandlerResponse, which feeds their writes in as the upstream body.
 */
import { PassThrough } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { endToEndResponseHeaders, type HeaderMap } from '../http/headers.ts';
import type { FilteredResponse, ResponseFilter } from '../policies/context.ts';
import { respondError, type DirectResponse } from '../policies/result.ts';
import { sendDirect, type DownstreamResponse } from '../http/downstream.ts';
import type { ClientFormat } from '../http/error-format.ts';

export interface FilteredResponseOptions {
  readonly res: DownstreamResponse;
  readonly response: FilteredResponse;
  readonly filters: readonly ResponseFilter[];
  /** HEAD requests and 204/304 answers have no body to filter. */
  readonly bodiless: boolean;
  /** True once the Exchange finished (timeout, client gone): stop writing. */
  finished(): boolean;
  /** Ends the exchange with the status the client saw. */
  complete(status: number, bytes: number): void;
  /** Stops the upstream response (a filter answered instead). */
  abortUpstream(): void;
  /** The format a filter's failure is rendered in (an in-process handler's clients: JSON-RPC, OpenAI …); default the gateway's JSON. */
  readonly format?: ClientFormat;
}

/** An error a filter may throw to choose the status (e.g. 502 for a response body over the limit). */
interface StatusError {
  readonly status?: number;
  readonly response?: { readonly status: number; readonly headers: readonly (readonly [string, string])[]; readonly body: Uint8Array };
}

/** Upstream chunks queued beyond this are held back by pausing the upstream. */
const HIGH_WATER_BYTES = 64 * 1024;

export class FilteredResponseWriter {
  readonly #o: FilteredResponseOptions;
  readonly #body = new PassThrough({ highWaterMark: HIGH_WATER_BYTES });
  #trailers: IncomingHttpHeaders | undefined;
  #bytes = 0;

  constructor(options: FilteredResponseOptions) {
    this.#o = options;
    void this.#run();
  }

  /** `flow` is the upstream's controller, or whatever else can hold a producer back (an in-process handler's writes). */
  push(flow: Pick<Dispatcher.DispatchController, 'pause' | 'resume'>, chunk: Buffer): void {
    if (!this.#body.write(chunk)) {
      flow.pause();
      this.#body.once('drain', () => flow.resume());
    }
  }

  end(trailers: IncomingHttpHeaders): void {
    this.#trailers = trailers;
    // Body filters (ext_proc) may read and change them when their input ends.
    this.#o.response.trailers = trailers as HeaderMap;
    this.#body.end();
  }

  /** The upstream failed or the exchange ended: the body stream ends with an error. */
  cancel(err: Error): void {
    this.#body.destroy(err);
  }

  async #run(): Promise<void> {
    const { res, response, filters } = this.#o;
    try {
      for (const f of filters) {
        if (!f.headers) continue;
        const answer = await f.headers(response);
        if (this.#o.finished()) return;
        if (answer) return this.#answer(answer);
      }
      const bodyFilters = this.#o.bodiless ? [] : filters.filter((f) => f.body);
      if (bodyFilters.length > 0) delete response.headers['content-length'];
      let stream: AsyncIterable<Uint8Array> = this.#body;
      for (const f of bodyFilters) stream = f.body!(stream, response);
      let headersSent = false;
      for await (const chunk of stream) {
        if (this.#o.finished()) return;
        if (!headersSent) {
          res.writeHead(response.status, response.headers);
          headersSent = true;
        }
        this.#bytes += chunk.length;
        if (!res.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) await new Promise<void>((resolve) => res.once('drain', resolve));
      }
      if (this.#o.finished()) return;
      if (!headersSent) res.writeHead(response.status, response.headers);
      const trailers = this.#o.response.trailers ?? this.#trailers;
      if (trailers && Object.keys(trailers).length > 0) res.addTrailers(endToEndResponseHeaders(trailers));
      res.end();
      this.#o.complete(response.status, this.#bytes);
    } catch (err) {
      if (this.#o.finished()) return;
      this.#o.abortUpstream();
      const e = err as StatusError;
      if (e.response) {
        return this.#answer({ status: e.response.status, headers: Object.fromEntries(e.response.headers), body: Buffer.from(e.response.body) });
      }
      // SPEC.md Errors: a response body over the buffer limit is a 502; other failures are ours.
      const failure = e.status === 502
        ? respondError(502, 'response_too_large', (err as Error).message)
        : respondError(500, 'response_processing_failed', 'a response policy failed');
      if (failure.action === 'respond') this.#o.complete(sendDirect(res, failure.response, [], this.#o.format), this.#bytes);
    }
  }

  #answer(answer: DirectResponse): void {
    this.#o.abortUpstream();
    this.#o.complete(sendDirect(this.#o.res, answer, []), 0);
  }
}
