import { readTextBounded } from '../../../http/body.ts';
import { Agent, request, type Dispatcher } from 'undici';
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Logger } from '../../../../common/logger.ts';
import { baseUrl, type ResolvedEndpoint } from '../../../ext/endpoint.ts';

/** Key lookup for jose's jwtVerify, from one provider's JWKS. */
export type KeyLookup = JWTVerifyGetKey;

/** An inline JWKS, parsed and validated at config time (a malformed one throws: member invalid). */
export function inlineKeys(text: string): KeyLookup {
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch (err) {
    throw new Error('jwks.inline is not JSON', { cause: err });
  }
  try {
    return createLocalJWKSet(jwks as JSONWebKeySet);
  } catch (err) {
    throw new Error(`jwks.inline: ${(err as Error).message}`, { cause: err });
  }
}

export interface RemoteJwksOptions {
  /** Resolved per fetch, so a backend's current address is used. */
  readonly endpoint: () => ResolvedEndpoint;
  readonly jwksPath: string | undefined;
  readonly cacheDurationMs: number;
  readonly logger: Logger;
  readonly now?: () => number;
}

/** A token naming an unknown `kid` triggers a refetch at most this often (key rotation). */
export const UNKNOWN_KID_REFETCH_INTERVAL_MS = 30_000;
/** Failed fetches are retried no sooner than this, so an outage does not cost a fetch per request. */
const FAILED_FETCH_RETRY_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 1024 * 1024;

/**
 * A remote JWKS (SPEC.md `jwks.remote`): fetched on first use, refreshed after `cacheDuration`,
 * refetched when a token names a `kid` it does not hold (at most once per 30 s), and kept while a
 * refresh fails so an identity provider outage does not reject tokens signed by known keys.
 * jose's own remote set drops its keys when a refresh fails; this keeps them.
 */
export class RemoteJwks {
  readonly #options: RemoteJwksOptions;
  readonly #now: () => number;
  #keys: KeyLookup | undefined;
  #fetchedAt = -Infinity;
  #attemptedAt = -Infinity;
  #lastFailed = false;
  #inflight: Promise<KeyLookup | undefined> | undefined;
  #dispatcher: Dispatcher | undefined;

  constructor(options: RemoteJwksOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** The lookup jwtVerify calls with the token's protected header. */
  readonly lookup: KeyLookup = async (header, token) => {
    const stale = this.#now() - this.#fetchedAt >= this.#options.cacheDurationMs;
    const keys = stale || !this.#keys ? ((await this.#refresh(this.#lastFailed ? FAILED_FETCH_RETRY_MS : 0)) ?? this.#keys) : this.#keys;
    if (!keys) throw new errors.JWKSNoMatchingKey('the JWKS could not be fetched');
    try {
      return await keys(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      // A new kid usually means the provider rotated its keys: look again, but boundedly, so
      // tokens with made-up kids cannot make us hammer the provider.
      if (this.#now() - this.#fetchedAt < UNKNOWN_KID_REFETCH_INTERVAL_MS) throw err;
      const fresh = await this.#refresh(UNKNOWN_KID_REFETCH_INTERVAL_MS);
      if (!fresh) throw err;
      return fresh(header, token);
    }
  };

  /** Concurrent callers share one fetch; a fetch is not retried within `minIntervalMs` of the last attempt. */
  #refresh(minIntervalMs: number): Promise<KeyLookup | undefined> {
    if (this.#inflight) return this.#inflight;
    if (this.#now() - this.#attemptedAt < minIntervalMs) return Promise.resolve(this.#keys);
    this.#attemptedAt = this.#now();
    this.#inflight = this.#fetch().then(
      (jwks) => {
        this.#keys = createLocalJWKSet(jwks);
        this.#fetchedAt = this.#now();
        this.#lastFailed = false;
        return this.#keys;
      },
      (err: unknown) => {
        this.#lastFailed = true;
        this.#options.logger.warn({ err: String(err) }, 'jwtAuthentication: fetching the remote JWKS failed; keeping the keys already known');
        return undefined;
      },
    ).finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #fetch(): Promise<JSONWebKeySet> {
    const target = this.#options.endpoint();
    const url = baseUrl(target) + (this.#options.jwksPath ?? '');
    const res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json, application/jwk-set+json' },
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
      dispatcher: this.#dispatcherFor(target),
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`GET ${url} answered ${res.statusCode}`);
    }
    // Over the cap the fetch fails like an unreachable JWKS: the keys already known stay in use.
    const jwks = JSON.parse(await readTextBounded(res.body, MAX_JWKS_BYTES, { what: `GET ${url}: the JWKS` })) as JSONWebKeySet;
    // Validate now, so a bad document counts as a failed fetch and the known keys stay.
    createLocalJWKSet(jwks);
    return jwks;
  }

  /** TLS options of a backend (CA, SNI) need their own agent; plain URLs use undici's global one. */
  #dispatcherFor(target: ResolvedEndpoint): Dispatcher | undefined {
    if (typeof target.tls !== 'object') return undefined;
    // Short keep-alive: the JWKS is fetched every few minutes, and a replaced config never closes this agent.
    this.#dispatcher ??= new Agent({ connect: target.tls, keepAliveTimeout: 1_000 });
    return this.#dispatcher;
  }
}
