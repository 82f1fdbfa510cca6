/**
 * Joining text parts into the one string some client formats have, and the offset units citations
 * travel in: Gemini counts UTF-8 bytes, canonical citations count UTF-16 code units (JavaScript
 * string indices), OpenAI annotations count characters (Unicode code points, what Python's `str`
 * indexes by).
 */
import type { Citation, Part } from '../canonical.ts';

/**
 * Put between two runs of text that non-text content (a search, a tool call, reasoning) separated:
 * "I'll look it up." + [search] + "Rates are unchanged" must not read "up.Rates".
 */
export const RUN_SEPARATOR = '\n\n';

/** A part that ends a text run. A bare signature (thinking without text) does not: Gemini attaches one to any part. */
export function breaksRun(p: Part): boolean {
  return p.type !== 'text' && !(p.type === 'thinking' && p.text === '');
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}

/**
 * The separator needed between joined text whose last UTF-16 unit is `lastCode` (-1: nothing yet)
 * and a new run starting with `after`; none when either side already has whitespace.
 */
export function separatorFor(lastCode: number, after: string): string {
  if (lastCode < 0 || after === '' || isSpace(lastCode) || isSpace(after.charCodeAt(0))) return '';
  return RUN_SEPARATOR;
}

/** Code points in `text` before UTF-16 offset `utf16` (a surrogate pair counts once). */
export function codePointOffset(text: string, utf16: number): number {
  const end = Math.min(utf16, text.length);
  let n = end;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const prev = text.charCodeAt(i - 1);
      if (prev >= 0xd800 && prev <= 0xdbff) n--;
    }
  }
  return n;
}

/** The UTF-16 offset in `text` of UTF-8 byte offset `bytes` (clamped to the text). */
export function utf16FromUtf8(text: string, bytes: number, from = 0, fromBytes = 0): number {
  let b = fromBytes;
  let i = from;
  while (i < text.length && b < bytes) {
    const c = text.charCodeAt(i);
    if (c < 0x80) b += 1;
    else if (c < 0x800) b += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) { b += 4; i++; }
    else b += 3;
    i++;
  }
  return i;
}

export interface JoinedText {
  readonly text: string;
  /** Citations with UTF-16 offsets into `text`. */
  readonly citations: Citation[];
}

/**
 * The text parts of `parts` as one string: adjacent parts are concatenated as they are (a
 * provider splitting a sentence into blocks keeps its own spacing), runs separated by other
 * content get RUN_SEPARATOR. Citations are shifted to offsets in the joined string.
 */
export function joinText(parts: readonly Part[]): JoinedText {
  let text = '';
  let broken = false;
  let citations: Citation[] | undefined;
  for (const p of parts) {
    if (p.type !== 'text') {
      if (breaksRun(p)) broken = true;
      continue;
    }
    if (p.text === '') continue;
    if (broken) text += separatorFor(text === '' ? -1 : text.charCodeAt(text.length - 1), p.text);
    broken = false;
    if (p.citations?.length) {
      const base = text.length;
      citations ??= [];
      for (const c of p.citations) citations.push({ ...c, start: base + c.start, end: base + c.end });
    }
    text += p.text;
  }
  return { text, citations: citations ?? [] };
}

/** OpenAI's url_citation fields for a canonical citation over `text` (offsets in code points). */
export function urlCitation(text: string, c: Citation): { url: string; title: string; start_index: number; end_index: number } {
  return { url: c.url, title: c.title ?? '', start_index: codePointOffset(text, c.start), end_index: codePointOffset(text, c.end) };
}
