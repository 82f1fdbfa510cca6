/**
 * Canonical request paths (docs/paths.md). Every request's path goes through `normalizeTarget`
 * once, where it enters the pipeline, so route matching, every policy, CEL `request.path` and the
 * upstream all see one spelling of it — the one Envoy's `normalize_path` + `merge_slashes` give:
 *
 * - percent-encoded unreserved characters (ALPHA, DIGIT, `-`, `.`, `_`, `~`) are decoded, other
 *   percent-encodings get uppercase hex (`%3a` → `%3A`);
 * - repeated slashes count as one (`//a///b` → `/a/b`);
 * - dot-segments are resolved (RFC 3986 §5.2.4), encoded ones (`%2e`, `%2E%2e`) too; `..` above
 *   the root stays at the root; a trailing slash is kept;
 * - the query string is left exactly as sent.
 *
 * What cannot be made unambiguous is refused (400): an encoded slash (`%2F`) or backslash (`%5C`),
 * a raw backslash, an encoded NUL (`%00`), a raw control character, space or `#`, and a `%` not
 * followed by two hex digits. Upstreams disagree on what those mean, so a Deny on `/admin`
 * cannot be sure it sees what the upstream will.
 */

/** Why a path was refused; the gateway answers 400 with this reason. */
export class PathRefusal {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

const ENCODED_SLASH = new PathRefusal('the path contains an encoded slash (%2F)');
const BACKSLASH = new PathRefusal('the path contains a backslash');
const ENCODED_NUL = new PathRefusal('the path contains an encoded NUL (%00)');
const CONTROL = new PathRefusal('the path contains a control character, space or #');
const BAD_ESCAPE = new PathRefusal('the path contains % not followed by two hex digits');
const NOT_ABSOLUTE = new PathRefusal('the path must start with /');

const SLASH = 0x2f;
const DOT = 0x2e;
const PERCENT = 0x25;
const QUESTION = 0x3f;
const BACKSLASH_CODE = 0x5c;
const HASH = 0x23;
const HEX = '0123456789ABCDEF';

/**
 * An origin-form request target (`/path?query`), canonical, or the reason it is refused. The
 * common case — no `%`, `\`, `#`, control character, `//` or `/.` before the query — returns the
 * very string it was given, after one scan.
 */
export function normalizeTarget(target: string): string | PathRefusal {
  const end = target.length;
  for (let i = 0; i < end; i++) {
    const c = target.charCodeAt(i);
    if (c === QUESTION) return target;
    if (c <= 0x20 || c === 0x7f || c === PERCENT || c === BACKSLASH_CODE || c === HASH) return slowTarget(target);
    if (c === SLASH && i + 1 < end) {
      const next = target.charCodeAt(i + 1);
      if (next === SLASH || next === DOT) return slowTarget(target);
    }
  }
  return target;
}

function slowTarget(target: string): string | PathRefusal {
  const q = target.indexOf('?');
  const path = normalizePath(q < 0 ? target : target.slice(0, q));
  if (path instanceof PathRefusal || q < 0) return path;
  return path + target.slice(q);
}

/** A path alone (no query), canonical, or the reason it is refused. */
export function normalizePath(path: string): string | PathRefusal {
  if (path.charCodeAt(0) !== SLASH) return NOT_ABSOLUTE;
  const segments: string[] = [];
  const end = path.length;
  // Decoded as it is read, so `%2e%2E` is `..` by the time the segment ends.
  let segment = '';
  for (let i = 1; i <= end; i++) {
    const c = i < end ? path.charCodeAt(i) : SLASH;
    if (c === SLASH) {
      if (segment === '..') segments.pop();
      else if (segment !== '' && segment !== '.') segments.push(segment);
      if (i === end) break;
      segment = '';
      continue;
    }
    if (c === PERCENT) {
      const byte = i + 2 < end ? hexByte(path.charCodeAt(i + 1), path.charCodeAt(i + 2)) : -1;
      if (byte < 0) return BAD_ESCAPE;
      if (byte === SLASH) return ENCODED_SLASH;
      if (byte === BACKSLASH_CODE) return BACKSLASH;
      if (byte === 0) return ENCODED_NUL;
      segment += isUnreserved(byte) ? String.fromCharCode(byte) : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
      i += 2;
      continue;
    }
    if (c === BACKSLASH_CODE) return BACKSLASH;
    if (c <= 0x20 || c === 0x7f || c === HASH) return CONTROL;
    segment += path[i];
  }
  // The last segment decides the trailing slash: `/a/`, `/a/.` and `/a/b/..` all end in one.
  const trailing = segment === '' || segment === '.' || segment === '..';
  if (segments.length === 0) return '/';
  const joined = `/${segments.join('/')}`;
  return trailing ? `${joined}/` : joined;
}

function isUnreserved(byte: number): boolean {
  return (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === DOT || byte === 0x5f || byte === 0x7e;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function hexByte(high: number, low: number): number {
  const h = hexDigit(high);
  const l = hexDigit(low);
  return h < 0 || l < 0 ? -1 : (h << 4) | l;
}
