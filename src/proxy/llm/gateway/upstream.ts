/**
 * Connections to LLM providers: one undici pool per provider origin and connection settings
 * (TLS by default for managed providers; a backend TLS/tcp/http policy gets its own connector).
 */
import { Pool, type Dispatcher } from 'undici';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { connectionSettings, connectorFor, serverNameFor } from '../../backend-policies/connection.ts';
import type { UpstreamTarget } from '../providers/types.ts';

export class ProviderPools {
  readonly #pools = new Map<string, Dispatcher>();

  acquire(target: UpstreamTarget, policy: BackendPolicy | undefined): Dispatcher {
    const settings = policy ? connectionSettings(policy) : undefined;
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
