/**
 * Name → checked address for the dynamic forward proxy. Answers are cached in a bounded map
 * (at most `maxEntries` names, each for `ttlMs`, least recently used evicted first; concurrent
 * look-ups of one name share one query), so client-chosen names cannot grow memory without
 * bound (docs/security.md). Every resolved address is checked against the blocked classes and
 * the caller connects to the checked address itself, never re-resolving the name, so a name
 * that answers differently on a second query (DNS rebinding) cannot slip past the check.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { refusedAddress, type AddressClass } from './address-classes.ts';

export const DNS_CACHE_MAX_ENTRIES = 1024;
export const DNS_CACHE_TTL_MS = 30_000;

export type Lookup = (host: string) => Promise<readonly string[]>;

const systemLookup: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type Resolution =
  | { readonly ok: true; readonly address: string }
  | { readonly ok: false; readonly reason: 'unresolved' | 'blocked'; readonly detail: string };

interface Entry {
  readonly addresses: Promise<readonly string[]>;
  readonly expires: number;
}

export interface ResolverOptions {
  readonly maxEntries?: number;
  readonly ttlMs?: number;
  readonly lookup?: Lookup;
  readonly now?: () => number;
}

export class CheckedResolver {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #ttl: number;
  readonly #lookup: Lookup;
  readonly #now: () => number;

  constructor(options: ResolverOptions = {}) {
    this.#max = options.maxEntries ?? DNS_CACHE_MAX_ENTRIES;
    this.#ttl = options.ttlMs ?? DNS_CACHE_TTL_MS;
    this.#lookup = options.lookup ?? systemLookup;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The address to connect to for `host`, or why not. A name with any blocked address among its
   * answers is refused as a whole (a mixed answer is the shape of a rebinding attempt).
   */
  async resolve(host: string, allowed: ReadonlySet<AddressClass>): Promise<Resolution> {
    let addresses: readonly string[];
    if (isIP(host) !== 0) addresses = [host];
    else {
      try {
        addresses = await this.#cached(host);
      } catch (err) {
        return { ok: false, reason: 'unresolved', detail: `${host} did not resolve: ${(err as Error).message}` };
      }
    }
    if (addresses.length === 0) return { ok: false, reason: 'unresolved', detail: `${host} has no address` };
    for (const address of addresses) {
      const blocked = refusedAddress(address, allowed);
      if (blocked) return { ok: false, reason: 'blocked', detail: `${host} resolves to ${address}, a ${blocked} address` };
    }
    return { ok: true, address: addresses[0] };
  }

  #cached(host: string): Promise<readonly string[]> {
    const now = this.#now();
    const known = this.#entries.get(host);
    if (known && known.expires > now) {
      // Map order is recency order: move the hit to the end.
      this.#entries.delete(host);
      this.#entries.set(host, known);
      return known.addresses;
    }
    const addresses = this.#lookup(host);
    this.#entries.delete(host);
    this.#entries.set(host, { addresses, expires: now + this.#ttl });
    // A failed look-up is not cached: the next request asks again.
    addresses.catch(() => {
      if (this.#entries.get(host)?.addresses === addresses) this.#entries.delete(host);
    });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    return addresses;
  }
}
