/**
 * Masks the credential the gateway sent on a call in what the provider answered. Providers echo
 * it in some errors ("Incorrect API key provided: sk-…"); passed through, the client would learn
 * the gateway's own key.
 */

export const MASK = '[redacted]';

/** Header values that are never secrets though the signer adds them. */
const NOT_SECRET = new Set(['host', 'content-type', 'content-length', 'accept', 'x-amz-date', 'x-amz-content-sha256', 'anthropic-version', 'anthropic-beta']);
/** Shorter values (a "1", a region) would mask ordinary words. */
const MIN_SECRET_LENGTH = 8;
const SCHEME = /^(?:Bearer|Basic|Token|Key)\s+/i;

/**
 * The credential values the gateway wrote on a call: headers the signer added or changed, each
 * also without its scheme (`Bearer `), and query parameters it added to the path.
 */
export function sentSecrets(before: { headers: Readonly<Record<string, string>>; path: string }, after: { headers: Readonly<Record<string, string | string[]>>; path: string }): SentSecrets {
  const out = new Set<string>();
  const add = (v: string) => {
    if (v.length >= MIN_SECRET_LENGTH) out.add(v);
    const bare = v.replace(SCHEME, '');
    if (bare !== v && bare.length >= MIN_SECRET_LENGTH) out.add(bare);
  };
  for (const [name, value] of Object.entries(after.headers)) {
    if (NOT_SECRET.has(name.toLowerCase())) continue;
    for (const v of Array.isArray(value) ? value : [value]) if (before.headers[name] !== v) add(v);
  }
  if (after.path !== before.path) {
    const was = new URLSearchParams(before.path.split('?')[1] ?? '');
    for (const [k, v] of new URLSearchParams(after.path.split('?')[1] ?? '')) if (was.get(k) !== v) add(v);
  }
  return new SentSecrets([...out]);
}

/** The credential values the gateway sent on one call, as maskSecrets looks for them. */
export class SentSecrets {
  /** Longest first, so a value containing another is masked whole. */
  readonly values: readonly string[];
  #probes: readonly Buffer[] | undefined;

  /** Takes `values` over (sorted in place). */
  constructor(values: string[]) {
    this.values = values.sort((a, b) => b.length - a.length);
  }

  /**
   * What a body is searched for, made on first use (a call whose answers are never masked pays
   * nothing): the values that contain no other value, as bytes. A bearer header and its bare key
   * are one search, not two, per streamed event; a body holding none of them holds no value.
   */
  get probes(): readonly Buffer[] {
    this.#probes ??= this.values.filter((v) => !this.values.some((o) => o !== v && v.includes(o))).map((v) => Buffer.from(v));
    return this.#probes;
  }
}

/** `body` with every secret replaced by MASK; the same object when none occurs. */
export function maskSecrets(body: Uint8Array, secrets: SentSecrets): Uint8Array {
  if (secrets.values.length === 0) return body;
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let found = false;
  for (const probe of secrets.probes) if (buf.includes(probe)) { found = true; break; }
  if (!found) return body;
  let text = buf.toString('utf8');
  for (const s of secrets.values) text = text.replaceAll(s, MASK);
  return Buffer.from(text);
}
