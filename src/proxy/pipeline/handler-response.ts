/**
 * The response an in-process backend handler (ai, mcp) writes to, when the pipeline has work of its
 * own on it: response effects (route ResponseHeaderModifier filters, then the traffic policies'
 * response mutations — CORS, headerModifiers.response, rate-limit headers …) applied to the head
 * the handler writes, and the pipeline's deadline. When the deadline passes before the head went
 * out, the pipeline answers and `cut()`s the handler off: to the handler this looks exactly like a
 * client that went away (a `close` before the response ended), so the abort paths the LLM and MCP
 * handlers already have for that stop their upstream work. Requests to Service backends, and
 * handler requests with nothing to apply, never get one.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { applyHeaderModifier, type CompiledHeaderModifier } from '../http/header-modifier.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { ResponseMutation } from '../policies/context.ts';
import type { DownstreamResponse } from '../http/downstream.ts';

export class HandlerResponse implements DownstreamResponse {
  readonly #res: DownstreamResponse;
  readonly #headerFilters: readonly CompiledHeaderModifier[];
  readonly #mutations: readonly ResponseMutation[];
  readonly #onHead: () => void;
  #closeListeners: (() => void)[] | undefined;
  /** Set once the pipeline answered instead: the handler's writes go nowhere. */
  #cut = false;

  constructor(res: DownstreamResponse, headerFilters: readonly CompiledHeaderModifier[], mutations: readonly ResponseMutation[], onHead: () => void) {
    this.#res = res;
    this.#headerFilters = headerFilters;
    this.#mutations = mutations;
    this.#onHead = onHead;
  }

  /** The handler never sent a head once cut off: it must not try to answer or cut the pipeline's answer. */
  get headersSent(): boolean {
    return !this.#cut && this.#res.headersSent;
  }

  get writableEnded(): boolean {
    return !this.#cut && this.#res.writableEnded;
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
    this.#res.writeHead(status, map);
    return this;
  }

  write(chunk: Buffer): boolean {
    return this.#cut ? true : this.#res.write(chunk);
  }

  end(chunk?: string | Buffer): this {
    if (this.#cut) return this;
    if (chunk === undefined) this.#res.end();
    else (this.#res as { end(chunk: string | Buffer): unknown }).end(chunk);
    return this;
  }

  addTrailers(headers: OutgoingHttpHeaders): void {
    if (!this.#cut) this.#res.addTrailers(headers);
  }

  destroy(error?: Error): this {
    if (!this.#cut) this.#res.destroy(error);
    return this;
  }

  once(event: 'drain', listener: () => void): this {
    if (this.#cut) listener();
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

  #close(): void {
    const listeners = this.#closeListeners;
    this.#closeListeners = [];
    for (const listener of listeners ?? []) listener();
  }
}
