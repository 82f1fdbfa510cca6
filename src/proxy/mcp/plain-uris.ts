/**
 * Resource URIs a client subscribed to without a target prefix, per session in this process, so
 * that `notifications/resources/updated` reaches it in the form it subscribed with. Everything
 * else (and a session this process never saw, such as a subscription made through another
 * replica) gets the prefixed `<target>+<uri>` form the lists publish.
 *
 * Bounded: the oldest sessions are forgotten first beyond MAX_SESSIONS, and a session keeps at
 * most MAX_PER_SESSION URIs (later ones fall back to the prefixed form).
 */
const MAX_SESSIONS = 10_000;
const MAX_PER_SESSION = 1_000;

function keyOf(target: string, uri: string): string {
  return `${target}\n${uri}`;
}

export class PlainUris {
  readonly #sessions = new Map<string, Set<string>>();

  /** Records (plain = true) or clears (plain = false) the unprefixed form of a subscription. */
  set(session: string, target: string, uri: string, plain: boolean): void {
    const uris = this.#sessions.get(session);
    if (!plain) {
      uris?.delete(keyOf(target, uri));
      if (uris?.size === 0) this.#sessions.delete(session);
      return;
    }
    if (uris) {
      // Refresh: the most recently used sessions are evicted last.
      this.#sessions.delete(session);
      this.#sessions.set(session, uris);
      if (uris.size < MAX_PER_SESSION) uris.add(keyOf(target, uri));
      return;
    }
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value as string);
    this.#sessions.set(session, new Set([keyOf(target, uri)]));
  }

  has(session: string | undefined, target: string, uri: string): boolean {
    return session !== undefined && this.#sessions.get(session)?.has(keyOf(target, uri)) === true;
  }

  drop(session: string): void {
    this.#sessions.delete(session);
  }
}
