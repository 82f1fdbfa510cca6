/**
 * Connections to LLM providers: one undici pool per provider origin and connection settings
 * (TLS by default for managed providers; a backend TLS/tcp/http policy gets its own connector).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { connectionSettings, connectorFor, serverNameFor } from '../../backend-policies/connection.ts';
import type { UpstreamTarget } from '../providers/types.ts';

/** Connection settings per (merged, per-config) policy object: derived once, not per request. */
const settingsOf = new WeakMap<BackendPolicy, ReturnType<typeof connectionSettings>>();

function cachedSettings(policy: BackendPolicy): ReturnType<typeof connectionSettings> {
  if (settingsOf.has(policy)) return settingsOf.get(policy);
  const settings = connectionSettings(policy);
  settingsOf.set(policy, settings);
  return settings;
}

export class ProviderPools {
  readonly #pools = new Map<string, Dispatcher>();

  acquire(target: UpstreamTarget, policy: BackendPolicy | undefined): Dispatcher {
    const settings = policy ? cachedSettings(policy) : undefined;
    const tls = target.tls || settings?.tls !== undefined;
    const host = target.host.includes(':') ? `[${target.host}]` : target.host;
    const origin = `${tls ? 'https' : 'http'}://${host}:${target.port}`;
    const key = `${settings?.fingerprint ?? '-'} ${origin}`;
    let pool = this.#pools.get(key);
    if (pool) return pool;
    if (!settings) {
      pool = new Pool(origin, { pipelining: 1 });
    } else {
      const base = new Pool(origin, { pipelining: 1, connect: connectorFor(settings, target.host), allowH2: settings.version === 'h2' });
      const servername = settings.tls ? serverNameFor(settings.tls, target.host) : undefined;
      // undici derives SNI from each request's Host and reconnects when it changes: pin it.
      pool = servername === undefined ? base : base.compose((dispatch) => (opts, handler) => dispatch({ ...opts, servername } as Dispatcher.DispatchOptions, handler));
    }
    this.#pools.set(key, pool);
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}

/** The Host header for a target: the port is left out when it is the scheme's default. */
export function hostHeader(target: UpstreamTarget): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return (target.tls && target.port === 443) || (!target.tls && target.port === 80) ? host : `${host}:${target.port}`;
}

export interface BufferedUpstreamResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * One request whose whole answer is wanted in memory (non-streaming LLM calls). Dispatched with
 * a handler that collects the chunks: undici's promise API would build a Readable, an async
 * iterator and an abort listener per request, which the bench showed as a large share of the
 * translated route's CPU. `signal` aborts the exchange (the client went away).
 */
export function bufferedRequest(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<BufferedUpstreamResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const onAbort = () => {
      const reason = signal.reason instanceof Error ? signal.reason : new Error('aborted');
      if (controller) controller.abort(reason);
      else reject(reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => signal.removeEventListener('abort', onAbort);
    dispatcher.dispatch(options, {
      onRequestStart(c) {
        controller = c;
      },
      onResponseStart(_c, status, responseHeaders) {
        statusCode = status;
        headers = responseHeaders;
      },
      onResponseData(_c, chunk: Buffer) {
        chunks.push(chunk);
        size += chunk.length;
      },
      onResponseEnd() {
        settle();
        resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) });
      },
      onResponseError(_c, err) {
        settle();
        reject(err);
      },
    });
  });
}
