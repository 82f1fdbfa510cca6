import { celError } from './cel-internals.ts';
import { RUNTIME_COST_BUDGET, SIZE_UNIT } from './cost-limits.ts';

/**
 * The per-evaluation cost meter. Evaluation is synchronous, so one module-level counter is enough:
 * `metered` sets it for the duration of one evaluation (restoring the outer one, should an
 * evaluation ever run inside another), and the instrumented expression (instrument.ts) and the
 * functions that allocate call `charge` as they go. Outside `metered` nothing is counted.
 */

let remaining = Infinity;
/** Once the budget is gone every further charge throws this same error: cheap, as quantifiers
 * (`exists`, `all`) catch an iteration's error and go on to the next element. */
let stopped: Error | undefined;
let lastSpent = 0;

/** The error an over-budget evaluation stops with: an ordinary CEL evaluation error. */
export const COST_LIMIT_CODE = 'cost_limit_exceeded';

function exceeded(): never {
  remaining = -Infinity; // stays exceeded: `default()` or `||` cannot absorb the error and go on.
  throw (stopped ??= celError(COST_LIMIT_CODE, `expression exceeded its cost budget of ${RUNTIME_COST_BUDGET} units (docs/cel.md "Cost limits")`));
}

/** Spends `units`; throws the CEL error `cost_limit_exceeded` once the budget is gone. */
export function charge(units: number): void {
  if ((remaining -= units) < 0) exceeded();
}

/** Spends for `chars` characters or bytes about to be scanned or allocated. */
export function chargeChars(chars: number): void {
  charge(chars / SIZE_UNIT);
}

/**
 * Starts counting for one evaluation with `budget` units and returns what the outer evaluation (if
 * any) had left, for `leave` in a finally. Numbers only: nothing is allocated per evaluation.
 */
export function enter(budget: number): number {
  const outer = remaining;
  remaining = budget;
  stopped = undefined;
  return outer;
}

/**
 * Ends the evaluation `enter` started. Throws the cost error when the budget ran out even if the
 * expression produced a value: `true || <over budget>` would absorb the error as CEL's logic
 * says, but the work was cut short all the same, so the evaluation fails.
 */
export function finish(): void {
  if (stopped !== undefined) throw stopped;
}

/** Restores the outer evaluation's budget (an evaluation inside another does not happen today). */
export function leave(outer: number, budget: number): void {
  lastSpent = budget - remaining;
  remaining = outer;
  stopped = outer < 0 ? stopped : undefined;
}

/** Runs `run` with a fresh budget of `budget` units. */
export function metered<T>(run: () => T, budget: number = RUNTIME_COST_BUDGET): T {
  const outer = enter(budget);
  try {
    const value = run();
    finish();
    return value;
  } finally {
    leave(outer, budget);
  }
}

/** The units the last finished `metered` run spent (Infinity when it ran out); for tests and docs. */
export function lastEvaluationCost(): number {
  return lastSpent;
}

/**
 * Sizes of structured values, memoised per object: CEL values are immutable, and a value built by
 * sharing (`cel.bind(a, [x, x], cel.bind(b, [a, a], …))`) has a size exponential in its
 * expression that only memoisation can compute in linear time.
 */
const sizes = new WeakMap<object, number>();

/**
 * What scanning, comparing, copying or serialising `value` costs, in units: a string or bytes one
 * unit per SIZE_UNIT characters, a list or map one unit per element or entry plus its elements'
 * sizes, everything else nothing.
 */
export function sizeCost(value: unknown): number {
  if (typeof value === 'string') return value.length / SIZE_UNIT;
  if (typeof value !== 'object' || value === null) return 0;
  if (value instanceof Uint8Array) return value.byteLength / SIZE_UNIT;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  let total = 0;
  if (Array.isArray(value)) {
    total = value.length;
    for (const item of value as unknown[]) total += sizeCost(item);
  } else if (value instanceof Map || value instanceof Set) {
    total = value.size;
    for (const item of value.values() as Iterable<unknown>) total += sizeCost(item);
  } else if (isPlainMap(value)) {
    for (const key in value) total += 1 + sizeCost((value as Record<string, unknown>)[key]);
  }
  sizes.set(value, total);
  return total;
}

function isPlainMap(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
}

