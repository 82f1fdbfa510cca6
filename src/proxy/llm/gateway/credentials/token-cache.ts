/**
 * One cached bearer token per key, refreshed in the background shortly before it expires so no
 * request waits on the token endpoint while a valid token is at hand; concurrent callers share
 * one fetch.
 */

export interface FetchedToken {
  readonly token: string;
  /** Lifetime in seconds as the issuer stated it. */
  readonly expiresInS: number;
}

/** Refresh this long before expiry (at most half the lifetime), so a token never expires in flight. */
const EARLY_REFRESH_MS = 60_000;

interface Entry {
  readonly token: string;
  readonly refreshAt: number;
  readonly expiresAt: number;
}

export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #pending = new Map<string, Promise<string>>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * The token for `key`. Before its refresh time: the cached token. Between refresh time and
   * expiry: still the cached token, while one refresh runs in the background (a failed refresh
   * is retried by the next caller). Without a valid token: the callers wait for one fetch.
   */
  get(key: string, fetch: () => Promise<FetchedToken>): Promise<string> {
    const now = this.#now();
    const cached = this.#entries.get(key);
    if (cached && now < cached.refreshAt) return Promise.resolve(cached.token);
    const refresh = this.#refresh(key, fetch);
    if (cached && now < cached.expiresAt) {
      refresh.catch(() => undefined);
      return Promise.resolve(cached.token);
    }
    return refresh;
  }

  #refresh(key: string, fetch: () => Promise<FetchedToken>): Promise<string> {
    let pending = this.#pending.get(key);
    if (pending) return pending;
    // The lifetime counts from the request: the issuer started it before we got the answer.
    const requestedAt = this.#now();
    pending = fetch().then(
      (t) => {
        const lifetimeMs = Math.max(0, t.expiresInS * 1000);
        this.#entries.set(key, {
          token: t.token,
          expiresAt: requestedAt + lifetimeMs,
          refreshAt: requestedAt + lifetimeMs - Math.min(EARLY_REFRESH_MS, lifetimeMs / 2),
        });
        this.#pending.delete(key);
        return t.token;
      },
      (err: unknown) => {
        this.#pending.delete(key);
        throw err;
      },
    );
    this.#pending.set(key, pending);
    return pending;
  }
}
