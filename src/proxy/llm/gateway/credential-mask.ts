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
export function sentSecrets(before: { headers: Readonly<Record<string, string>>; path: string }, after: { headers: Readonly<Record<string, string | string[]>>; path: string }): string[] {
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
  // Longest first, so a value containing another is masked whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/** `body` with every secret replaced by MASK; the same object when none occurs. */
export function maskSecrets(body: Uint8Array, secrets: readonly string[]): Uint8Array {
  if (secrets.length === 0) return body;
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (!secrets.some((s) => buf.includes(s))) return body;
  let text = buf.toString('utf8');
  for (const s of secrets) text = text.replaceAll(s, MASK);
  return Buffer.from(text);
}
