/**
 * Who a proxy is. A proxy presents its Kubernetes ServiceAccount token as a bearer on the config
 * stream; an Authenticator turns it into a username (the real one asks the API server,
 * token-review.ts), and only ServiceAccount users are proxies: `system:serviceaccount:<ns>:<sa>`.
 * A proxy is entitled to the gateways of its ServiceAccount's namespace and no others.
 */

export interface Authenticator {
  /**
   * The username the token belongs to, or undefined when the token is not valid. Throws when it
   * cannot tell (the API server is unreachable): the stream is refused, never let through.
   */
  authenticate(token: string): Promise<string | undefined>;
}

export interface ProxyIdentity {
  readonly username: string;
  readonly namespace: string;
  readonly serviceAccount: string;
}

const SERVICE_ACCOUNT = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/;

/** The ServiceAccount behind a username, or undefined for any other kind of user. */
export function serviceAccountOf(username: string): ProxyIdentity | undefined {
  const match = SERVICE_ACCOUNT.exec(username);
  if (!match) return undefined;
  return { username, namespace: match[1] as string, serviceAccount: match[3] as string };
}

/** Tokens are bounded before anything looks at them (a projected token is ~1 KB). */
export const MAX_TOKEN_BYTES = 16 * 1024;

/** The token of an `authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | null): string | undefined {
  if (header === null || header.length > MAX_TOKEN_BYTES + 7) return undefined;
  const match = /^Bearer ([\x21-\x7e]+)$/i.exec(header);
  return match?.[1];
}

/** For tests and development: fixed tokens mapped to usernames. */
export class StaticTokenAuthenticator implements Authenticator {
  readonly #users: ReadonlyMap<string, string>;
  constructor(users: Readonly<Record<string, string>>) {
    this.#users = new Map(Object.entries(users));
  }
  authenticate(token: string): Promise<string | undefined> {
    return Promise.resolve(this.#users.get(token));
  }
}
