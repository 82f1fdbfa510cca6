import { RE2JS } from 're2js';
import { memoize } from './bounded-cache.ts';

/**
 * Linear-time regular expressions for CEL (RE2 syntax, as in cel-spec and Envoy).
 *
 * Patterns usually come from configuration, so the same few strings are compiled again and again;
 * a bounded insertion-ordered Map acts as an LRU so that a pattern built from request data cannot
 * grow memory without limit. Invalid patterns are cached too, as their error.
 */
const MAX_CACHED_PATTERNS = 1024;

type CacheEntry = { ok: true; re: RE2JS } | { ok: false; message: string };

export const compileRegex: (pattern: string) => CacheEntry = memoize(MAX_CACHED_PATTERNS, (pattern) => {
  try {
    return { ok: true, re: RE2JS.compile(pattern) };
  } catch (err) {
    return { ok: false, message: `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}` };
  }
});

/** Thrown by the helpers below; the CEL function wrappers turn it into an evaluation error. */
export class RegexError extends Error {
  override name = 'RegexError';
}

function mustCompile(pattern: string): RE2JS {
  const entry = compileRegex(pattern);
  if (!entry.ok) throw new RegexError(entry.message);
  return entry.re;
}

/** CEL `matches`: true when the pattern matches any substring (use ^…$ to anchor). */
export function regexTest(input: string, pattern: string): boolean {
  return mustCompile(pattern).test(input);
}

/** First match of the pattern, or undefined (Kubernetes `find`). */
export function regexFind(input: string, pattern: string): string | undefined {
  const m = mustCompile(pattern).matcher(input);
  return m.find() ? (m.group() ?? '') : undefined;
}

/** All non-overlapping matches, at most `limit` of them when limit >= 0 (Kubernetes `findAll`). */
export function regexFindAll(input: string, pattern: string, limit = -1): string[] {
  const out: string[] = [];
  if (limit === 0) return out;
  const m = mustCompile(pattern).matcher(input);
  while (m.find()) {
    out.push(m.group() ?? '');
    if (limit > 0 && out.length >= limit) break;
  }
  return out;
}

/**
 * Replace every match; `$1`, `${name}` in the replacement refer to capture groups (RE2 style).
 * `beforeOutput` is told the most characters the result can have before it is built: the matches
 * are counted first, and each group reference expands to at most the whole input.
 */
export function regexReplaceAll(input: string, pattern: string, replacement: string, beforeOutput?: (maxChars: number) => void): string {
  const re = mustCompile(pattern);
  if (beforeOutput !== undefined) {
    let matches = 0;
    const m = re.matcher(input);
    while (m.find()) matches++;
    const references = replacement.split('$').length - 1;
    beforeOutput(input.length + matches * replacement.length + references * input.length);
  }
  return re.matcher(input).replaceAll(replacement);
}
