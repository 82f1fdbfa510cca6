/**
 * Pagination across targets. A merged page holds one page of every target still listing; the
 * composite cursor remembers, per target, the cursor of its next page. Targets absent from the
 * cursor are done. The cursor is opaque to the client (MCP says so) and carries no secrets
 * (upstream cursors are as opaque to us), so it is base64url JSON rather than encrypted.
 */
const PREFIX = 'sb1.';
const MAX_CURSOR_LENGTH = 64 * 1024;

/** Target name → that target's cursor for its next page. */
export type CompositeCursor = Readonly<Record<string, string>>;

/** undefined when every target is done (no next page). */
export function encodeCursor(next: CompositeCursor): string | undefined {
  if (Object.keys(next).length === 0) return undefined;
  return PREFIX + Buffer.from(JSON.stringify(next), 'utf8').toString('base64url');
}

/** The per-target cursors, or undefined when the text is not a cursor we issued for these targets. */
export function decodeCursor(text: string, targets: ReadonlySet<string>): CompositeCursor | undefined {
  if (!text.startsWith(PREFIX) || text.length > MAX_CURSOR_LENGTH) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const entries = Object.entries(parsed);
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const [target, cursor] of entries) {
    if (!targets.has(target) || typeof cursor !== 'string') return undefined;
    out[target] = cursor;
  }
  return out;
}
