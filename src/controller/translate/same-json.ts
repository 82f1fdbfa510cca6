/**
 * Whether two values built by the translator are the same data: primitives equal (Object.is),
 * arrays of the same length with the same items, plain objects with the same own keys (an
 * `undefined` value counts as a key) and the same values. Anything else (Map, Set, a class
 * instance …) counts as different unless it is the same object, so a true answer is always safe
 * to act on: the incremental translator (incremental.ts) then keeps the previous object, whose
 * serialisation it already holds.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  // for-in over plain objects (no inherited enumerable keys): no key arrays built for 10k attachments.
  let count = 0;
  for (const key in a) {
    count++;
    if (!Object.hasOwn(b, key) || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  for (const _ in b) count--;
  return count === 0;
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
