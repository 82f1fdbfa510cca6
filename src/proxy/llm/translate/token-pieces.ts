/**
 * Cuts text into short pieces for the BPE tokenizer so that its cost stays linear.
 *
 * gpt-tokenizer splits text with the o200k pre-tokenizer regex and then merges byte pairs inside
 * each regex piece in time quadratic in the piece's length (bytePairMerge rescans the whole piece
 * per merge). A run of one character — or any text without spaces: base64, CJK, a minified blob —
 * is one regex piece, so 160 KB of it took 13 s of CPU and 1.9 MB ran for minutes.
 *
 * The cuts come in two kinds:
 * - exact cuts, where the o200k pre-tokenizer always ends a piece: before a space or tab that
 *   follows a non-space, and after an ASCII letter followed by ASCII punctuation other than an
 *   apostrophe (no o200k piece holds a letter followed by such a character). Counting the two
 *   sides separately gives the same total as counting them together;
 * - hard cuts, when no exact cut occurred for MAX_PIECE_CHARS characters. These may split a token,
 *   so the count of such a run is approximate (about one token more per cut).
 * Adjacent exact pieces are joined into chunks of up to CHUNK_CHARS (fewer tokenizer calls).
 */

/** The longest stretch given to the tokenizer without an exact pre-tokenizer boundary. */
export const MAX_PIECE_CHARS = 64;
/** The longest chunk handed to one tokenizer call (made of exact pieces). */
export const CHUNK_CHARS = 4096;

const SPACE = 0x20;
const TAB = 0x09;
const APOSTROPHE = 0x27;

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** ASCII characters that are neither letters, digits, apostrophe nor whitespace. */
function isAsciiPunct(c: number): boolean {
  return c > 0x20 && c < 0x7f && !isAsciiLetter(c) && !isAsciiDigit(c) && c !== APOSTROPHE;
}

const NON_ASCII_SPACE = /\s/u;

function isWhitespace(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0x80) return c === SPACE || (c >= 0x09 && c <= 0x0d);
  return NON_ASCII_SPACE.test(text[i]);
}

/** True when the o200k pre-tokenizer always starts a new piece at `i` (0 < i < length). */
export function isExactCut(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  const prev = text.charCodeAt(i - 1);
  if (c === SPACE || c === TAB) return !isWhitespace(text, i - 1);
  return isAsciiLetter(prev) && isAsciiPunct(c);
}

export interface TextPiece {
  readonly start: number;
  readonly end: number;
  /** The piece ends at a hard cut (its count may differ from the unsplit text's by a token). */
  readonly hardCut: boolean;
  /** The tokenizer work the piece costs (stretchCost summed over its stretches between cuts). */
  readonly cost: number;
}

/**
 * Calls `visit` with consecutive pieces covering `text`, each about CHUNK_CHARS long at most
 * (plus one stretch) and with no stretch longer than MAX_PIECE_CHARS without an exact cut.
 * Stops early when `visit` returns false. Linear in the text's length.
 */
export function forEachPiece(text: string, visit: (piece: TextPiece) => boolean): void {
  const n = text.length;
  let start = 0;
  let boundary = 0;
  let cost = 0;
  for (let i = 1; i < n; i++) {
    if (isExactCut(text, i)) {
      cost += stretchCost(i - boundary);
      boundary = i;
      if (i - start >= CHUNK_CHARS) {
        if (!visit({ start, end: i, hardCut: false, cost })) return;
        start = i;
        cost = 0;
      }
    } else if (i - boundary >= MAX_PIECE_CHARS) {
      // No exact boundary for a while: cut here, never between the halves of a surrogate pair.
      const cut = isLowSurrogate(text.charCodeAt(i)) ? i + 1 : i;
      if (cut >= n) break;
      cost += stretchCost(cut - boundary);
      if (!visit({ start, end: cut, hardCut: true, cost })) return;
      start = boundary = i = cut;
      cost = 0;
    }
  }
  if (start < n) visit({ start, end: n, hardCut: false, cost: cost + stretchCost(n - boundary) });
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * The tokenizer's work for one stretch, in characters: measured, gpt-tokenizer spends a few
 * microseconds per uncached character whatever the stretch length up to MAX_PIECE_CHARS (regex,
 * UTF-8 encoding, rank look-ups, its merge cache), plus the merge loop's quadratic term.
 */
export function stretchCost(length: number): number {
  return length + (length * length) / MAX_PIECE_CHARS;
}
