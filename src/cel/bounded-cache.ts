/**
 * A size-bounded memo for pure parsing functions (regex patterns, CIDRs, addresses). Keys may come
 * from request data, so the map drops its oldest entry instead of growing; hits are re-inserted so
 * the entries in use stay (an LRU on Map's insertion order).
 */
export function memoize<V>(maxEntries: number, compute: (key: string) => V): (key: string) => V {
  const entries = new Map<string, V>();
  return (key) => {
    if (entries.has(key)) {
      const hit = entries.get(key) as V;
      entries.delete(key);
      entries.set(key, hit);
      return hit;
    }
    const value = compute(key);
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
    entries.set(key, value);
    return value;
  };
}
