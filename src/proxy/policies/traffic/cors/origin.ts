/**
 * Origin patterns of the Gateway API HTTPCORSFilter: `*` allows every origin; otherwise
 * `<scheme>://<host>[:<port>]` where `*` in the host matches any run of characters (so
 * `https://*.example.com` allows `https://a.example.com` and `https://a.b.example.com`).
 * Matching is by plain string scans (no regex on request data), case-insensitive.
 */
export type OriginMatcher = (origin: string) => boolean;

export function compileOrigins(patterns: readonly string[]): OriginMatcher {
  const exact = new Set<string>();
  const globs: (readonly string[])[] = [];
  let any = false;
  for (const raw of patterns) {
    const p = raw.trim().toLowerCase();
    if (p === '*') any = true;
    else if (p.includes('*')) globs.push(p.split('*'));
    else exact.add(p);
  }
  if (any) return () => true;
  return (origin) => {
    const o = origin.toLowerCase();
    return exact.has(o) || globs.some((parts) => globMatches(parts, o));
  };
}

/** `parts` is the pattern split at `*`: the first must start the text, the last end it, the rest appear in order. */
function globMatches(parts: readonly string[], text: string): boolean {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!text.startsWith(first) || text.length < first.length + last.length || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = text.indexOf(parts[i], at);
    if (found < 0 || found + parts[i].length > end) return false;
    at = found + parts[i].length;
  }
  // A wildcard stands for host characters only: it never spans into the path or the scheme.
  return !text.slice(first.length, end).includes('/');
}
