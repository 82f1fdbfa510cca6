import { randomBytes } from 'node:crypto';

/**
 * Where translated responses get their ids and timestamps. Production uses random ids and the
 * clock; tests inject a deterministic source so fixtures are byte-stable.
 */
export interface TranslationContext {
  newId(prefix: string): string;
  /** Unix seconds. */
  now(): number;
}

export const defaultContext: TranslationContext = {
  newId: (prefix) => `${prefix}${randomBytes(12).toString('hex')}`,
  now: () => Math.floor(Date.now() / 1000),
};

/** Counter-based ids (one counter per prefix, so chunk boundaries cannot reorder them) and a fixed clock. */
export function deterministicContext(now = 1700000000): TranslationContext {
  const counters = new Map<string, number>();
  return {
    newId: (prefix) => {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      return `${prefix}${String(n).padStart(4, '0')}`;
    },
    now: () => now,
  };
}
