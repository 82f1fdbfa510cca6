/**
 * Connections to LLM providers: one undici pool per provider origin and connection settings
 * (TLS by default for managed providers; a backend TLS/tcp/http policy gets its own connector).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import type { AiProviderIR } from '../../../ir/ai.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { connectionSettings, connectorFor, serverNameFor, type ConnectionSettings } from '../../policies/backend/connection.ts';
import type { UpstreamTarget } from '../translate/providers/types.ts';
import { MAX_PROVIDER_RESPONSE_BYTES, ResponseTooLargeError } from './bounded-body.ts';
import type { HeadWait } from './provider-health.ts';
import { guardedConnector } from './guarded-connect.ts';

/** Connection settings per (merged, per-config) policy object: derived once, not per request. */
const settingsOf = new WeakMap<BackendPolicy, ConnectionSettings | undefined>();
/** The same with TLS on, for providers that speak TLS under a policy without `tls`. */
const tlsSettingsOf = new WeakMap<BackendPolicy, ConnectionSettings | undefined>();

function cached(cache: WeakMap<BackendPolicy, ConnectionSettings | undefined>, policy: BackendPolicy, derive: () => ConnectionSettings | undefined): ConnectionSettings | undefined {
  if (cache.has(policy)) return cache.get(policy);
  const settings = derive();
  cache.set(policy, settings);
  return settings;
}

/**
 * The connection settings of a provider call (HTTP routes and Realtime alike). A policy with
 * connection members but no `tls` (tcp timeouts, a tunnel, an HTTP version) keeps a provider that
 * speaks TLS on TLS — system CAs, the provider's name as SNI and in the certificate check — instead
 * of the plaintext connection its own connector would make.
 */
export function providerConnection(policy: BackendPolicy, tls: boolean): ConnectionSettings | undefined {
  const settings = cached(settingsOf, policy, () => connectionSettings(policy));
  if (settings === undefined || settings.tls !== undefined || !tls) return settings;
  return cached(tlsSettingsOf, policy, () => connectionSettings({ ...policy, tls: {} }));
}

export class ProviderPools {
  readonly #pools = new Map<string, Dispatcher>();
  /** The last answer: most handlers have one provider, so the key need not be rebuilt per request. */
  #last: { host: string; port: number; tls: boolean; serverName: string | undefined; guard: boolean; policy: BackendPolicy | undefined; pool: Dispatcher } | undefined;

  acquire(target: UpstreamTarget, policy: BackendPolicy | undefined): Dispatcher {
    const last = this.#last;
    const guard = target.guardAddresses === true;
    if (last && last.policy === policy && last.host === target.host && last.port === target.port && last.tls === target.tls && last.serverName === target.serverName && last.guard === guard) return last.pool;
    const pool = this.#pool(target, policy);
    this.#last = { host: target.host, port: target.port, tls: target.tls, serverName: target.serverName, guard, policy, pool };
    return pool;
  }

  #pool(target: UpstreamTarget, policy: BackendPolicy | undefined): Dispatcher {
    const settings = policy ? providerConnection(policy, target.tls) : undefined;
    const tls = target.tls || settings?.tls !== undefined;
    const host = target.host.includes(':') ? `[${target.host}]` : target.host;
    const origin = `${tls ? 'https' : 'http'}://${host}:${target.port}`;
    const guard = target.guardAddresses === true;
    const key = `${settings?.fingerprint ?? '-'} ${origin} ${target.serverName ?? ''}${guard ? ' guarded' : ''}`;
    let pool = this.#pools.get(key);
    if (pool) return pool;
    if (!settings) {
      pool = new Pool(origin, { pipelining: 1, ...(guard ? { connect: guardedConnector() } : {}) });
    } else {
      const connector = connectorFor(settings, target.serverName ?? target.host);
      // Through a tunnel the tunnel's proxy resolves the name (it may be the only way out): the guard cannot see what it reaches.
      const base = new Pool(origin, { pipelining: 1, connect: guard && !settings.tunnel ? guardedConnector(connector) : connector, allowH2: settings.version === 'h2' });
      const servername = settings.tls ? serverNameFor(settings.tls, target.serverName ?? target.host) : undefined;
      // undici derives SNI from each request's Host and reconnects when it changes: pin it.
      pool = servername === undefined ? base : base.compose((dispatch) => (opts, handler) => dispatch({ ...opts, servername } as Dispatcher.DispatchOptions, handler));
    }
    this.#pools.set(key, pool);
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#last = undefined;
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}

/** `own` marked for the connect-time address check; made once per target (the plan's targets are per config). */
const guardedTargets = new WeakMap<UpstreamTarget, UpstreamTarget>();
function guardedTarget(own: UpstreamTarget): UpstreamTarget {
  let marked = guardedTargets.get(own);
  if (!marked) guardedTargets.set(own, (marked = { ...own, guardAddresses: true }));
  return marked;
}

/**
 * Where requests to a provider connect: a custom provider's Service replicas (its ready
 * endpoints) in turn, with TLS checking the Service's name; any other provider at its own
 * address.
 */
export class ReplicaTurns {
  readonly #next = new WeakMap<AiProviderIR, number>();

  target(provider: AiProviderIR, own: UpstreamTarget): UpstreamTarget {
    const replicas = provider.endpoints;
    if (replicas === undefined || replicas.length === 0) return provider.guardAddresses ? guardedTarget(own) : own;
    const i = (this.#next.get(provider) ?? 0) % replicas.length;
    this.#next.set(provider, i + 1);
    return { host: replicas[i].host, port: replicas[i].port, tls: own.tls, serverName: own.host };
  }
}

/** The Host header for a target: the port is left out when it is the scheme's default. */
export function hostHeader(target: UpstreamTarget): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return (target.tls && target.port === 443) || (!target.tls && target.port === 80) ? host : `${host}:${target.port}`;
}

/**
 * traffic.hostRewrite `None`: the Host the client sent (as route filters left it; a URLRewrite
 * hostname wins, as on a Service backend) instead of the provider's own. Undefined otherwise, and
 * for a request without a Host (HTTP/2 without :authority never reaches here).
 */
export function clientHostFor(request: { readonly policy: { readonly upstream: { readonly hostRewrite?: 'Auto' | 'None' } } | undefined; readonly headers: Readonly<Record<string, string | string[]>> }): string | undefined {
  if (request.policy?.upstream.hostRewrite !== 'None') return undefined;
  const host = request.headers.host;
  return typeof host === 'string' && host !== '' ? host : undefined;
}

/**
 * The TLS server name for a provider request whose Host is not the provider's (hostRewrite None):
 * undici would otherwise take SNI from the Host header and the provider's certificate would not
 * match. Undefined for an IP address (no SNI) or a plain connection.
 */
export function pinnedServerName(target: UpstreamTarget): string | undefined {
  const name = target.serverName ?? target.host;
  return target.tls && isIP(name) === 0 ? name : undefined;
}

export interface BufferedUpstreamResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Tells an exchange that its client went away. The client sink is one (client-io.ts); a plain
 * interface rather than an AbortSignal, whose listener bookkeeping (EventTarget, a controller per
 * request) showed in the translated route's profile.
 */
export interface AbortSource {
  readonly aborted: boolean;
  /** Calls `listener` once when the exchange is abandoned; returns the unsubscribe function. */
  onAbort(listener: () => void): () => void;
}

/**
 * One request whose whole answer is wanted in memory (non-streaming LLM calls). Dispatched with
 * a handler that collects the chunks: undici's promise API would build a Readable, an async
 * iterator and an abort listener per request, which the bench showed as a large share of the
 * translated route's CPU. `abort` ends the exchange (the client went away). An answer past
 * `maxBytes` aborts the exchange and rejects with ResponseTooLargeError (bounded-body.ts).
 */
export function bufferedRequest(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, abort: AbortSource, maxBytes = MAX_PROVIDER_RESPONSE_BYTES, wait?: HeadWait): Promise<BufferedUpstreamResponse> {
  return new Promise((resolve, reject) => {
    if (abort.aborted) {
      reject(new ClientGoneError());
      return;
    }
    let controller: Dispatcher.DispatchController | undefined;
    /** Set when the exchange ended before undici started it (still queued): it is aborted as it starts. */
    let endedEarly: Error | undefined;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    const end = (err: Error) => {
      if (controller) controller.abort(err);
      else {
        endedEarly = err;
        reject(err);
      }
    };
    const settle = abort.onAbort(() => end(new ClientGoneError()));
    // A stall eviction of the provider (provider-health.ts) ends the wait as the client leaving would.
    if (wait) wait.interrupt = end;
    dispatcher.dispatch(options, {
      onRequestStart(c) {
        controller = c;
        if (endedEarly) c.abort(endedEarly);
      },
      onResponseStart(_c, status, responseHeaders) {
        statusCode = status;
        headers = responseHeaders;
      },
      onResponseData(c, chunk: Buffer) {
        size += chunk.length;
        if (size > maxBytes) {
          // Drop what was kept and stop reading: memory stays at the cap, not the answer's size.
          chunks.length = 0;
          const err = new ResponseTooLargeError(maxBytes);
          settle();
          reject(err);
          c.abort(err);
          return;
        }
        chunks.push(chunk);
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

/** The exchange was abandoned because the client went away. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client went away');
  }
}
