/**
 * A Prometheus label value that request data decides (a client's model name, a tool a client
 * asks for, a CEL value): each distinct value is a new series, so the values one label may take
 * are capped. The first `maxValues` distinct values are kept as they are (up to `maxLength`
 * characters); every later new value is reported as `other`. Values from the config (route,
 * backend, provider names) need no cap: the config bounds them.
 */
export class BoundedLabel {
  readonly #seen = new Set<string>();
  readonly #maxValues: number;
  readonly #maxLength: number;

  constructor(maxValues: number, maxLength = 128) {
    this.#maxValues = maxValues;
    this.#maxLength = maxLength;
  }

  value(raw: string): string {
    const v = raw.length > this.#maxLength ? raw.slice(0, this.#maxLength) : raw;
    if (this.#seen.has(v)) return v;
    if (this.#seen.size >= this.#maxValues) return OTHER;
    this.#seen.add(v);
    return v;
  }
}

/** The value of a capped label once its cap is reached. */
export const OTHER = 'other';
