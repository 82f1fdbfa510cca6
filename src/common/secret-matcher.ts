/** What every Secret-derived value is shown as (SPEC.md: /config_dump, /status, logs, errors). */
export const REDACTED = '[redacted]';

/**
 * Values at least this long are also found inside longer strings. Shorter ones (a four-digit PIN,
 * a user name) only match a whole string: inside text they are too likely to be ordinary words.
 */
export const MIN_CONTAINED_LENGTH = 8;

/**
 * Finds known secret values in strings, in time linear in the length of the text: values are
 * indexed by their first MIN_CONTAINED_LENGTH characters, so each position of the text costs one
 * map lookup however many values there are (tens of thousands of API keys stay cheap).
 */
export class SecretMatcher {
  readonly #exact = new Set<string>();
  readonly #byPrefix = new Map<string, string[]>();

  constructor(values: Iterable<string>) {
    for (const value of values) {
      if (value === '' || this.#exact.has(value)) continue;
      this.#exact.add(value);
      if (value.length < MIN_CONTAINED_LENGTH) continue;
      const prefix = value.slice(0, MIN_CONTAINED_LENGTH);
      const list = this.#byPrefix.get(prefix);
      if (list) list.push(value);
      else this.#byPrefix.set(prefix, [value]);
    }
    // Longest first, so a match at a position covers as much as it can.
    for (const list of this.#byPrefix.values()) list.sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.#exact.size;
  }

  /** The string is a secret value, or contains one long enough to be found inside text. */
  isSecret(text: string): boolean {
    if (this.#exact.has(text)) return true;
    for (let i = 0; i + MIN_CONTAINED_LENGTH <= text.length; i++) if (this.#matchAt(text, i) > 0) return true;
    return false;
  }

  /** The text with every secret value in it replaced by REDACTED. */
  scrub(text: string): string {
    if (this.#exact.has(text)) return REDACTED;
    if (this.#byPrefix.size === 0) return text;
    let out = '';
    let copied = 0;
    for (let i = 0; i + MIN_CONTAINED_LENGTH <= text.length;) {
      const length = this.#matchAt(text, i);
      if (length === 0) {
        i++;
        continue;
      }
      out += text.slice(copied, i) + REDACTED;
      i += length;
      copied = i;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  /** Length of the longest value starting at `i`, 0 when none does. */
  #matchAt(text: string, i: number): number {
    const candidates = this.#byPrefix.get(text.slice(i, i + MIN_CONTAINED_LENGTH));
    if (!candidates) return 0;
    for (const value of candidates) if (text.startsWith(value, i)) return value.length;
    return 0;
  }
}
