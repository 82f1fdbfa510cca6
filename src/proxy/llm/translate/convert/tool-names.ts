/**
 * Bedrock and Anthropic tool names must match [a-zA-Z0-9_-]{1,64}. Names are sanitised on the way up and the
 * original names restored on the way back, so a client calling a tool `get.weather` sees
 * `get.weather` again, never `get_weather`.
 */
const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

export class ToolNameMap {
  private readonly toUpstream = new Map<string, string>();
  private readonly toClient = new Map<string, string>();

  /** The Bedrock-safe name for a client name; stable for the life of one request. */
  upstream(name: string): string {
    const known = this.toUpstream.get(name);
    if (known) return known;
    let safe = VALID.test(name) ? name : (name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'tool');
    // Two client names may sanitise to the same string: disambiguate with a counter suffix.
    for (let i = 2; this.toClient.has(safe) && this.toClient.get(safe) !== name; i++) {
      const suffix = `_${i}`;
      safe = safe.slice(0, 64 - suffix.length) + suffix;
    }
    this.toUpstream.set(name, safe);
    this.toClient.set(safe, name);
    return safe;
  }

  /** The client's name for a name Bedrock returned. */
  client(name: string): string {
    return this.toClient.get(name) ?? name;
  }
}
