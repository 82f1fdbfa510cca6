import { H2CClient, Pool, type Dispatcher } from 'undici';
import type { Endpoint } from '../../ir/types.ts';

export type UpstreamProtocol = 'http1' | 'h2c';

/**
 * Keep-alive connection pools per upstream endpoint and protocol, shared by every config that
 * names the same endpoint, so a config swap keeps its warm connections. HTTP/1.1 gets a Pool;
 * h2c gets one multiplexed H2CClient connection (HTTP/2 needs no pool of sockets).
 */
export class UpstreamPools {
  readonly #pools = new Map<string, Pool | H2CClient>();

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
