/**
 * A bracket-depth check over JSON bytes, run before anything parses or walks them.
 *
 * V8's JSON.parse copes with any nesting, but JSON.stringify and the walkers that follow (LLM
 * translation, MCP rewriting) recurse: a 100k-deep request overflowed the stack and answered 502
 * "could not reach the provider". One linear pass over the bytes (string contents skipped) refuses
 * such bodies first. It reads UTF-8 bytes: every byte it looks for is ASCII, which no byte of a
 * multi-byte character can be.
 */

/** The deepest nesting of arrays and objects accepted in a JSON body the gateway parses (AI routes, provider answers, MCP messages). */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/** True when `bytes`, read as JSON, nests arrays/objects deeper than `max`. Linear; never throws. */
export function jsonTooDeep(bytes: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if ((b === CLOSE_BRACKET || b === CLOSE_BRACE) && depth > 0) {
      depth--;
    }
  }
  return false;
}

/** The message a client sees when its body nests too deep. */
export const TOO_DEEP_MESSAGE = `request body nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`;
