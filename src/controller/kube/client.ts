/**
 * The few raw REST calls the controller makes (list, server-side apply, get/create/update of a
 * Lease), through the kubeconfig's authentication and TLS settings exactly as client-node's own
 * Watch does (RequestContext → applySecurityAuthentication → undici fetch with its dispatcher).
 *
 * Why not client-node's typed APIs: their deserializer turns timestamps into Date objects and
 * drops fields it does not know, so a Service listed would differ from the same Service watched
 * (the watch hands raw JSON). The translator must see the same object either way, so both
 * paths keep the JSON as the API server sent it.
 */
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';

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
}

export class KubeClient {
  readonly #kc: KubeConfig;
  readonly #server: string;

  constructor(kc: KubeConfig) {
    this.#kc = kc;
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
    const response = await fetch(url, {
      method,
      headers,
      dispatcher: ctx.getDispatcher(),
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_RESPONSE_BYTES) {
      await response.body?.cancel();
      throw new KubeApiError(response.status, 'TooLarge', `${method} ${path}: answer of ${length} bytes is over the ${MAX_RESPONSE_BYTES}-byte bound`);
    }
    const text = await response.text();
    const parsed = text.length > 0 ? safeParse(text) : undefined;
    if (response.status < 200 || response.status > 299) {
      const status = (parsed ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(response.status, status.reason ?? 'Unknown', `${method} ${path}: ${response.status} ${status.message ?? text.slice(0, 200)}`);
    }
    return parsed as T;
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
