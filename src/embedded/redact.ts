import { REDACTED } from '../common/secret-matcher.ts';

/**
 * A copy of `value` with the location of every JSON Pointer (RFC 6901) in `pointers` replaced by
 * "[redacted]": a string, or a whole subtree. Pointers that name nothing are ignored (the config
 * they were computed for is the one shown, so this only happens to a stale list).
 */
export function redactAt(value: unknown, pointers: readonly string[]): unknown {
  if (pointers.length === 0) return value;
  if (pointers.includes('')) return REDACTED;
  const tree: PointerTree = new Map();
  for (const pointer of pointers) {
    let node = tree;
    const tokens = pointer.split('/').slice(1).map(unescapeToken);
    tokens.forEach((token, i) => {
      const last = i === tokens.length - 1;
      const existing = node.get(token);
      if (last) node.set(token, true);
      else if (existing !== true) {
        const child: PointerTree = existing ?? new Map();
        node.set(token, child);
        node = child;
      }
    });
  }
  return copyRedacted(value, tree);
}

/** Pointer tokens by level: `true` marks a redacted location (nothing under it matters). */
type PointerTree = Map<string, PointerTree | true>;

function copyRedacted(value: unknown, tree: PointerTree): unknown {
  if (value === null || typeof value !== 'object') return value;
  const at = (key: string, child: unknown): unknown => {
    const mark = tree.get(key);
    if (mark === true) return REDACTED;
    return mark ? copyRedacted(child, mark) : child;
  };
  if (Array.isArray(value)) return value.map((child, i) => at(String(i), child));
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, at(key, child)]));
}

function unescapeToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

