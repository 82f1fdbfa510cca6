/**
 * The Anthropic stream's most common event, read without building its object: a text delta is
 * most of a stream's events, and JSON.parse of the whole event (two objects) cost more than the
 * rest of its translation. Only the exact compact shape Anthropic sends is taken,
 *
 *   {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}
 *
 * and its text is still read by JSON.parse (as a lone string literal, which also proves nothing
 * else hides in it: an unescaped quote would end it). Anything else — other spacing, more fields,
 * other key order — returns undefined and takes the full parse, so the result never differs.
 */
const HEAD = '{"type":"content_block_delta","index":';
const DELTA = ',"delta":{"type":"text_delta","text":';
const TAIL = '}}';
const ZERO = 48;
const NINE = 57;
const QUOTE = 34;

/** The text of an Anthropic text-delta event in its compact shape; undefined for any other data. */
export function anthropicTextDelta(data: string): string | undefined {
  if (!data.startsWith(HEAD)) return undefined;
  // The index: a JSON integer (no sign, no leading zero).
  let at = HEAD.length;
  const first = data.charCodeAt(at);
  if (first < ZERO || first > NINE) return undefined;
  at++;
  if (first !== ZERO) while (at < data.length && data.charCodeAt(at) >= ZERO && data.charCodeAt(at) <= NINE) at++;
  if (!data.startsWith(DELTA, at)) return undefined;
  const start = at + DELTA.length;
  const end = data.length - TAIL.length;
  if (end - start < 2 || !data.endsWith(TAIL) || data.charCodeAt(start) !== QUOTE || data.charCodeAt(end - 1) !== QUOTE) return undefined;
  try {
    const text: unknown = JSON.parse(data.slice(start, end));
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}
