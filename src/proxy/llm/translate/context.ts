import { randomFillSync } from 'node:crypto';

/**
 * Where translated responses get their ids and timestamps. Production uses random ids and the
 * clock; tests inject a deterministic source so fixtures are byte-stable.
 */
export interface TranslationContext {
  newId(prefix: string): string;
  /** Unix seconds. */
  now(): number;
}

const ID_BYTES = 12;
/**
 * Random bytes for ids, filled 256 ids at a time: a stream takes one to three ids as it starts
 * (response, message, item), and one crypto call per id sat on the first-token path. As random
 * as one call per id; the bytes are hex-encoded into ids and never reused.
 */
const idPool = Buffer.alloc(ID_BYTES * 256);
let idPoolAt = idPool.length;

function randomHex(): string {
  if (idPoolAt === idPool.length) {
    randomFillSync(idPool);
    idPoolAt = 0;
  }
  const hex = idPool.toString('hex', idPoolAt, idPoolAt + ID_BYTES);
  idPoolAt += ID_BYTES;
  return hex;
}

export const defaultContext: TranslationContext = {
  newId: (prefix) => `${prefix}${randomHex()}`,
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
