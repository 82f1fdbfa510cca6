import { H2CClient, Pool, type Dispatcher } from 'undici';
import type { Endpoint } from '../../../ir/types.ts';
import { connectorFor, serverNameFor, type ConnectionSettings } from './connection.ts';

import type { RoundRobin } from '../../routing/picker.ts';

export type UpstreamProtocol = 'http1' | 'h2c';

/** One endpoint of a backend with the dispatcher (pool) that reaches it. */
export interface UpstreamTarget {
  readonly dispatcher: Dispatcher;
  readonly host: string;
  readonly port: number;
  /** `host[:port]` for a rewritten Host header (port left out when 80). */
  readonly authority: string;
}

/**
 * The endpoints of one backend as the backend-policy layer sees them (compile.ts re-pools them
 * under a policy's connection settings); backends/backend.ts's CompiledBackend is one.
 */
export interface UpstreamEndpoints {
  readonly key: string;
  readonly protocol: UpstreamProtocol;
  readonly endpoints: RoundRobin<UpstreamTarget>;
}

/**
 * Keep-alive connection pools per upstream endpoint and protocol, shared by every config that
 * names the same endpoint, so a config swap keeps its warm connections. HTTP/1.1 gets a Pool;
 * h2c gets one multiplexed H2CClient connection (HTTP/2 needs no pool of sockets).
 */
export class UpstreamPools {
  readonly #pools = new Map<string, Dispatcher>();

  acquire(endpoint: Endpoint, protocol: UpstreamProtocol): Dispatcher {
    const origin = `http://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
    const key = `${protocol} ${origin}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      pool = protocol === 'h2c' ? new H2CClient(origin) : new Pool(origin, { pipelining: 1 });
      this.#pools.set(key, pool);
    }
    return pool;
  }

  /**
   * A pool for an endpoint under a backend policy's connection settings (TLS, version, tcp),
   * keyed by the settings' fingerprint so differently configured routes never share a socket.
   */
  acquireWith(endpoint: Endpoint, settings: ConnectionSettings, fallback: UpstreamProtocol): Dispatcher {
    const tls = settings.tls;
    const bracketed = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    const origin = `${tls ? 'https' : 'http'}://${bracketed}:${endpoint.port}`;
    const version = settings.version ?? (tls ? 'http1' : fallback === 'h2c' ? 'h2' : 'http1');
    const key = `${settings.fingerprint} ${version} ${origin}`;
    let pool = this.#pools.get(key);
    if (pool) return pool;
    const connect = connectorFor(settings, endpoint.host);
    if (!tls) pool = version === 'h2' ? new H2CClient(origin, { connect }) : new Pool(origin, { pipelining: 1, connect });
    else {
      const servername = serverNameFor(tls, endpoint.host);
      const base = new Pool(origin, { connect, allowH2: settings.version === 'h2' || (settings.version === undefined && tls.alpn.includes('h2')) });
      // undici derives SNI from each request's Host and reconnects when it changes: pin it.
      pool = servername === undefined ? base : base.compose((dispatch) => (opts, handler) => dispatch({ ...opts, servername } as Dispatcher.DispatchOptions, handler));
    }
    this.#pools.set(key, pool);
    return pool;
  }

  /** Close pools the new config no longer uses; their in-flight requests finish first. */
  retainOnly(used: ReadonlySet<Dispatcher>): void {
    for (const [key, pool] of this.#pools) {
      if (used.has(pool)) continue;
      this.#pools.delete(key);
      pool.close().catch(() => undefined);
    }
  }

  /** Let in-flight requests finish, then stop; after `graceMs` destroy what is left. */
  async close(graceMs: number): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        for (const p of pools) p.destroy().catch(() => undefined);
        resolve();
      }, graceMs);
    });
    await Promise.race([Promise.all(pools.map((p) => p.close().catch(() => undefined))).then(() => undefined), forced]);
    clearTimeout(timer);
  }
}
