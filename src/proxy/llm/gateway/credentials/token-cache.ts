/** One cached bearer token per key, refreshed shortly before it expires; concurrent callers share one fetch. */

export interface FetchedToken {
  readonly token: string;
  /** Lifetime in seconds as the issuer stated it. */
  readonly expiresInS: number;
}

/** Refresh this long before expiry, so a token never expires in flight. */
const EARLY_REFRESH_MS = 60_000;

export class TokenCache {
  readonly #entries = new Map<string, { token: string; refreshAt: number }>();
  readonly #pending = new Map<string, Promise<string>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get(key: string, fetch: () => Promise<FetchedToken>): Promise<string> {
    const cached = this.#entries.get(key);
    if (cached && cached.refreshAt > this.#now()) return Promise.resolve(cached.token);
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = fetch().then(
        (t) => {
          this.#entries.set(key, { token: t.token, refreshAt: this.#now() + Math.max(0, t.expiresInS * 1000 - EARLY_REFRESH_MS) });
          this.#pending.delete(key);
          return t.token;
        },
        (err: unknown) => {
          this.#pending.delete(key);
          throw err;
        },
      );
      this.#pending.set(key, pending);
    }
    return pending;
  }
}
