/**
 * One cached bearer token per key, refreshed in the background shortly before it expires so no
 * request waits on the token endpoint while a valid token is at hand; concurrent callers share
 * one fetch.
 */

import { traceCall } from '../../telemetry/tracing/request-trace.ts';

/** The span of a token fetch on traced requests. */
const TOKEN_SPAN = { 'switchboard.policy': 'tokenEndpoint' } as const;

export interface FetchedToken<T = string> {
  /** The bearer token, or any credential value (cloud-A session credentials). */
  readonly token: T;
  /** Lifetime in seconds as the issuer stated it. */
  readonly expiresInS: number;
}

/** Refresh this long before expiry (at most half the lifetime), so a token never expires in flight. */
const EARLY_REFRESH_MS = 60_000;

/** Entries kept at most; past it, expired entries go first, then the oldest (per-user session names must not grow memory forever). */
export const MAX_ENTRIES = 10_000;

interface Entry {
  readonly token: unknown;
  readonly refreshAt: number;
  readonly expiresAt: number;
}

export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #pending = new Map<string, Promise<unknown>>();
  readonly #now: () => number;
  readonly #max: number;

  constructor(now: () => number = Date.now, maxEntries = MAX_ENTRIES) {
    this.#now = now;
    this.#max = maxEntries;
  }

  /**
   * The token for `key`. Before its refresh time: the cached token. Between refresh time and
   * expiry: still the cached token, while one refresh runs in the background (a failed refresh
   * is retried by the next caller). Without a valid token: the callers wait for one fetch.
   */
  get<T = string>(key: string, fetch: () => Promise<FetchedToken<T>>): Promise<T> {
    const now = this.#now();
    const cached = this.#entries.get(key);
    // One key always holds one kind of value: callers give each mechanism its own key prefix.
    if (cached && now < cached.refreshAt) return Promise.resolve(cached.token as T);
    const refresh = this.#refresh(key, fetch);
    if (cached && now < cached.expiresAt) {
      refresh.catch(() => undefined);
      return Promise.resolve(cached.token as T);
    }
    return refresh;
  }

  /** How many tokens are cached (tests). */
  get size(): number {
    return this.#entries.size;
  }

  #refresh<T>(key: string, fetch: () => Promise<FetchedToken<T>>): Promise<T> {
    const existing = this.#pending.get(key);
    if (existing) return existing as Promise<T>;
    // The lifetime counts from the request: the issuer started it before we got the answer.
    const requestedAt = this.#now();
    // On a traced request, the fetch is a CLIENT span under it (telemetry/tracing).
    const pending = traceCall('token_endpoint', TOKEN_SPAN, fetch).then(
      (t) => {
        const lifetimeMs = Math.max(0, t.expiresInS * 1000);
        this.#entries.delete(key);
        this.#entries.set(key, {
          token: t.token,
          expiresAt: requestedAt + lifetimeMs,
          refreshAt: requestedAt + lifetimeMs - Math.min(EARLY_REFRESH_MS, lifetimeMs / 2),
        });
        this.#pending.delete(key);
        this.#bound();
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

  #bound(): void {
    if (this.#entries.size <= this.#max) return;
    const now = this.#now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
    // Map order is insertion order, and a refresh re-inserts: the first entries are the least recently fetched.
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#max) break;
      this.#entries.delete(key);
    }
  }
}
