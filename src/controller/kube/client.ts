/**
 * The few raw REST calls the controller makes (list, server-side apply, get/create/update of a
 * Lease), through the kubeconfig's authentication and TLS settings exactly as client-node's own
 * Watch does (RequestContext → applySecurityAuthentication → undici with its dispatcher).
 *
 * Sent with undici's request(), not its fetch(): fetch builds WHATWG Request/Response objects and
 * streams (and tees the request body) for every call, and the leader's first status write is
 * 11k calls — in a heap profile those were ~155 MiB of the ~360 MiB of garbage that piled up in
 * the serving thread's old space during that write (it sets how large the heap, and RSS, grow).
 *
 * Why not client-node's typed APIs: their deserializer turns timestamps into Date objects and
 * drops fields it does not know, so a Service listed would differ from the same Service watched
 * (the watch hands raw JSON). The translator must see the same object either way, so both
 * paths keep the JSON as the API server sent it.
 */
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { request as undiciRequest, type Dispatcher } from 'undici';

/** A non-2xx answer, with the Status the server sent (`reason`, `message`). */
export class KubeApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  constructor(statusCode: number, reason: string, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

/** Bound on one answer's body: a list of every object of a kind in a big cluster fits, a runaway stream does not. */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /**
   * A success's body is not parsed and request() resolves to undefined: for answers nobody reads
   * (a status write answers with the whole object — 11k of them after the leader's first write).
   */
  readonly ignoreAnswer?: boolean;
}

/**
 * How long one connection pool serves every request. client-node builds a new undici Agent for
 * each request whose kubeconfig carries TLS settings (a CA, a client certificate, or
 * insecure-skip-tls-verify: every real cluster): a new connection and TLS handshake per request,
 * each kept alive until undici's idle timeout. The leader's first status write is one PATCH per
 * object (11,042 in bench/control-plane.ts): thousands of sockets open at once, their buffers
 * outliving the write. One pool is reused instead, and replaced by the next request's after this
 * long, so a rotated CA or client certificate (re-read by client-node on every request) is in use
 * within a minute.
 */
export const DISPATCHER_REUSE_MS = 60_000;

export class KubeClient {
  readonly #kc: KubeConfig;
  readonly #server: string;
  #dispatcher: { readonly pool: Dispatcher; readonly until: number } | undefined;

  readonly #reuseMs: number;

  constructor(kc: KubeConfig, options: { readonly dispatcherReuseMs?: number } = {}) {
    this.#kc = kc;
    this.#reuseMs = options.dispatcherReuseMs ?? DISPATCHER_REUSE_MS;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.#server = cluster.server.replace(/\/+$/, '');
  }

  get kubeConfig(): KubeConfig {
    return this.#kc;
  }

  async request<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.#server + path);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const ctx = new RequestContext(url.toString(), HttpMethod[method]);
    await this.#kc.applySecurityAuthentication(ctx);
    const headers: Record<string, string> = { ...ctx.getHeaders(), accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    const dispatcher = this.#pool(ctx.getDispatcher() as Dispatcher | undefined);
    const response = await undiciRequest(url, {
      method,
      headers,
      ...(dispatcher ? { dispatcher } : {}),
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const { statusCode } = response;
    const length = Number(response.headers['content-length'] ?? 0);
    if (length > MAX_RESPONSE_BYTES) {
      response.body.destroy();
      throw new KubeApiError(statusCode, 'TooLarge', `${method} ${path}: answer of ${length} bytes is over the ${MAX_RESPONSE_BYTES}-byte bound`);
    }
    const failed = statusCode < 200 || statusCode > 299;
    if (!failed && options.ignoreAnswer) {
      // Read and dropped chunk by chunk, the connection kept: no string of the whole object per
      // status write (11k of them after the leader's first write, garbage on the serving thread).
      await response.body.dump({ limit: MAX_RESPONSE_BYTES });
      return undefined as T;
    }
    const text = await response.body.text();
    const parsed = text.length > 0 ? safeParse(text) : undefined;
    if (failed) {
      const status = (parsed ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(statusCode, status.reason ?? 'Unknown', `${method} ${path}: ${statusCode} ${status.message ?? text.slice(0, 200)}`);
    }
    return parsed as T;
  }

  /** Closes the reused connection pool (requests in flight finish first). */
  async close(): Promise<void> {
    const current = this.#dispatcher;
    this.#dispatcher = undefined;
    await current?.pool.close();
  }

  /** The pool to send on: the reused one while it is fresh, else `fresh` (this request's, from client-node) from now on. */
  #pool(fresh: Dispatcher | undefined): Dispatcher | undefined {
    // No TLS settings: client-node leaves fetch on undici's global pool, which is reused already.
    if (fresh === undefined) return undefined;
    const now = Date.now();
    const current = this.#dispatcher;
    if (current && now < current.until) {
      // Never used, it holds no connection: closing it only marks it closed.
      void fresh.close();
      return current.pool;
    }
    this.#dispatcher = { pool: fresh, until: now + this.#reuseMs };
    // The replaced pool's requests in flight finish; its idle connections close.
    if (current) void current.pool.close();
    return fresh;
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
