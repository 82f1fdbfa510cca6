/** Weighted random choice; weight 0 is never picked. Built once per config. */
/** The cumulative weights of a picker with one value or none: pick() never reads them. */
const NO_WEIGHTS: readonly number[] = Object.freeze([]);

export class WeightedPicker<T> {
  // Exactly as long as their items (an array grown by push() keeps room for 17), and no weights
  // for a single value, the common rule (issue 15: one picker per rule, 10,000 rules).
  readonly #values: readonly T[];
  readonly #cumulative: readonly number[];
  readonly #total: number;

  constructor(items: readonly { readonly weight: number; readonly value: T }[]) {
    const picked = items.filter((item) => item.weight > 0);
    let total = 0;
    const cumulative = picked.map((item) => (total += item.weight));
    this.#values = picked.map((item) => item.value);
    this.#cumulative = picked.length > 1 ? cumulative : NO_WEIGHTS;
    this.#total = total;
  }

  get empty(): boolean {
    return this.#total === 0;
  }

  /** `random` in [0, 1); injectable for tests. */
  pick(random: number = Math.random()): T | undefined {
    if (this.#values.length <= 1) return this.#values[0];
    const point = random * this.#total;
    for (let i = 0; i < this.#cumulative.length; i++) if (point < this.#cumulative[i]) return this.#values[i];
    return this.#values[this.#values.length - 1];
  }
}

/** Round-robin over a fixed list. */
export class RoundRobin<T> {
  readonly #items: readonly T[];
  #next = 0;

  constructor(items: readonly T[]) {
    this.#items = items;
  }

  get size(): number {
    return this.#items.length;
  }

  all(): readonly T[] {
    return this.#items;
  }

  next(): T | undefined {
    if (this.#items.length === 0) return undefined;
    const item = this.#items[this.#next];
    this.#next = (this.#next + 1) % this.#items.length;
    return item;
  }
}
