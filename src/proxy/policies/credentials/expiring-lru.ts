/**
 * A bounded cache of verification results (JWTs, basic-auth passwords) that honours each entry's
 * expiry. Keys come from request data, so the size is capped: the least recently used entry goes
 * first (Map insertion order, a hit is re-inserted). Only successes are stored, so an attacker
 * cannot fill it with anything a valid credential did not produce.
 */
export class ExpiringLru<V> {
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { readonly value: V; readonly expiresAt: number }>();

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores `value` until `expiresAt` (epoch ms); an entry already expired is not stored. */
  set(key: string, value: V, expiresAt: number): void {
    if (this.#maxEntries <= 0 || expiresAt <= this.#now()) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, expiresAt });
  }
}
