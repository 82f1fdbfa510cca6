import { createHash } from 'node:crypto';
import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Authenticator } from './auth.ts';

export interface TokenReviewOptions {
  /** Audiences the token must be issued for (the proxy's projected token audience); empty: the API server's. */
  readonly audiences?: readonly string[];
  /** How long a reviewed, valid token is trusted without asking again (default 60 s). */
  readonly cacheTtlMs?: number;
  /** At most this many tokens are remembered (default 1000); the oldest is forgotten first. */
  readonly cacheSize?: number;
  readonly now?: () => number;
}

/**
 * The real Authenticator: Kubernetes TokenReview (authentication.k8s.io/v1) through
 * @kubernetes/client-node. Valid answers are cached briefly, keyed by the token's hash, so a
 * fleet reconnecting after a controller restart does not cost one review per proxy per attempt;
 * refusals are not cached. An API server that cannot answer is an error: the stream is refused.
 */
export class TokenReviewAuthenticator implements Authenticator {
  readonly #api: AuthenticationV1Api;
  readonly #options: TokenReviewOptions;
  readonly #cache = new Map<string, { readonly username: string; readonly until: number }>();

  constructor(kubeConfig: KubeConfig, options: TokenReviewOptions = {}) {
    this.#api = kubeConfig.makeApiClient(AuthenticationV1Api);
    this.#options = options;
  }

  async authenticate(token: string): Promise<string | undefined> {
    const now = this.#options.now?.() ?? Date.now();
    const key = createHash('sha256').update(token).digest('base64');
    const cached = this.#cache.get(key);
    if (cached && cached.until > now) return cached.username;
    this.#cache.delete(key);

    const review = await this.#api.createTokenReview({
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, ...(this.#options.audiences?.length ? { audiences: [...this.#options.audiences] } : {}) },
      },
    });
    const status = review.status;
    const username = status?.authenticated === true ? status.user?.username : undefined;
    if (!username) return undefined;

    this.#cache.set(key, { username, until: now + (this.#options.cacheTtlMs ?? 60_000) });
    const limit = this.#options.cacheSize ?? 1000;
    while (this.#cache.size > limit) this.#cache.delete(this.#cache.keys().next().value as string);
    return username;
  }
}
