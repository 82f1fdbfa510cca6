/**
 * Hostname tables with the Gateway API's precedence: an exact name beats a wildcard, a longer
 * wildcard beats a shorter one, and a catch-all (null) comes last. Used for listeners (by Host or
 * SNI), TLS certificates (by SNI) and route hostnames within a listener.
 */

/** Lowercase, drop the port and a trailing dot; `[v6]:port` keeps the brackets off. */
export function normalizeHost(authority: string | undefined): string {
  if (!authority) return '';
  let host = authority;
  if (host.charCodeAt(0) === 91 /* [ */) {
    const end = host.indexOf(']');
    host = end > 0 ? host.slice(1, end) : host;
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host.toLowerCase();
}

/** `*.example.com` matches `a.example.com` and `a.b.example.com`, never `example.com`. */
export function wildcardMatches(pattern: string, host: string): boolean {
  const suffix = pattern.slice(1);
  return host.length > suffix.length && host.endsWith(suffix);
}

export class HostTable<T> {
  readonly #exact = new Map<string, T>();
  /** `.example.com` suffixes, longest first. */
  readonly #wildcards: { suffix: string; value: T }[] = [];
  #catchAll: T | undefined;

  /** Entries given in any order; for equal hostnames the first one wins. */
  constructor(entries: Iterable<readonly [hostname: string | null, value: T]>) {
    for (const [hostname, value] of entries) {
      if (hostname === null || hostname === '' || hostname === '*') {
        this.#catchAll ??= value;
      } else if (hostname.startsWith('*.')) {
        const suffix = hostname.slice(1).toLowerCase();
        if (!this.#wildcards.some((w) => w.suffix === suffix)) this.#wildcards.push({ suffix, value });
      } else {
        const exact = normalizeHost(hostname);
        if (!this.#exact.has(exact)) this.#exact.set(exact, value);
      }
    }
    this.#wildcards.sort((a, b) => b.suffix.length - a.suffix.length);
  }

  /** The most specific value for a normalized host. */
  lookup(host: string): T | undefined {
    const exact = this.#exact.get(host);
    if (exact !== undefined) return exact;
    for (const w of this.#wildcards) {
      if (host.length > w.suffix.length && host.endsWith(w.suffix)) return w.value;
    }
    return this.#catchAll;
  }

  /** Every value whose hostname matches, most specific first. */
  lookupAll(host: string): T[] {
    const out: T[] = [];
    const exact = this.#exact.get(host);
    if (exact !== undefined) out.push(exact);
    for (const w of this.#wildcards) {
      if (host.length > w.suffix.length && host.endsWith(w.suffix)) out.push(w.value);
    }
    if (this.#catchAll !== undefined) out.push(this.#catchAll);
    return out;
  }
}
