/**
 * The short strings of the objects one scan reads, shared between them (issue 15: memory at 10k
 * objects). A file parsed in the parser thread arrives by structured clone, which makes every
 * string anew: 10k HTTPRoutes hold 10k copies each of their apiVersion, kind, namespace, parent
 * and backend names and match types (~2 MiB at 10k routes), kept as long as the objects. Each
 * string value of at most MAX_LENGTH characters is replaced, in place, by the first equal one
 * the scan met. Property names are V8's own internalised strings already.
 *
 * One pool per scan, dropped after it: nothing stays alive for a string no object holds any more.
 * Bounded (docs/security.md): at most MAX_ENTRIES strings are pooled per scan (later ones are left
 * as they are); the walk follows the parsed documents, whose nesting the parser bounds (100).
 */
const MAX_LENGTH = 64;
const MAX_ENTRIES = 65_536;

export class SharedStrings {
  readonly #pool = new Map<string, string>();

  /** `value`'s strings (array items and property values, at any depth) replaced by shared equal ones. */
  share(value: unknown): void {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'string') value[i] = this.#shared(item);
        else if (typeof item === 'object' && item !== null) this.share(item);
      }
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const item = record[key];
      if (typeof item === 'string') record[key] = this.#shared(item);
      else if (typeof item === 'object' && item !== null) this.share(item);
    }
  }

  #shared(text: string): string {
    if (text.length > MAX_LENGTH) return text;
    const kept = this.#pool.get(text);
    if (kept !== undefined) return kept;
    if (this.#pool.size < MAX_ENTRIES) this.#pool.set(text, text);
    return text;
  }
}
