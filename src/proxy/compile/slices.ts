import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A piece of config-time work written as a generator: it `yield`s between units (a backend, a
 * rule, a listener) wherever it may be paused, and returns its result. The same job runs either
 * to the end in one go (`runToEnd`: tests, tools) or cooperatively on the serving event loop
 * (`runInSlices`), so both give the same result by construction.
 */
export type SlicedJob<T> = Generator<void, T, void>;

/** Runs `job` synchronously to its result. */
export function runToEnd<T>(job: SlicedJob<T>): T {
  for (;;) {
    const step = job.next();
    if (step.done) return step.value;
  }
}

/**
 * The longest a slice of config compile holds the event loop before it lets waiting I/O run. Small
 * enough that a request arriving during a swap waits about as long as one garbage collection;
 * large enough that the turns in between (setImmediate, about 5 µs each) add little to the total.
 */
export const DEFAULT_SLICE_MS = 10;

/**
 * Runs `job` on this event loop in slices of about `sliceMs`: after a yield past the budget, it
 * waits for the next turn of the loop (setImmediate, after pending I/O callbacks), so requests
 * keep being served while a large config compiles. A slice can only end at a yield: one unit of
 * work longer than the budget runs whole.
 */
export async function runInSlices<T>(job: SlicedJob<T>, sliceMs = DEFAULT_SLICE_MS): Promise<T> {
  let sliceEnd = performance.now() + sliceMs;
  for (;;) {
    const step = job.next();
    if (step.done) return step.value;
    if (performance.now() >= sliceEnd) {
      await nextTurn();
      sliceEnd = performance.now() + sliceMs;
    }
  }
}
