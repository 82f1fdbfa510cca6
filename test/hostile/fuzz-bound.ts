/**
 * The time bound every fuzz property asserts per call. It catches a stall (a super-linear path or a
 * loop that never ends on some input), not a slow call: the fuzz inputs are small, so a bounded
 * parser answers in well under a millisecond, and 1 s leaves room for a GC pause or a busy CI
 * machine running two test files at once. Super-linearity on large inputs has its own tests.
 */
import assert from 'node:assert/strict';

export const STALL_MS = 1_000;

/** Runs `call` and fails if it took longer than STALL_MS; `input` describes the input in the message. */
export function assertPrompt(call: () => void, input: () => string): void {
  const t0 = performance.now();
  call();
  const ms = performance.now() - t0;
  assert.ok(ms < STALL_MS, `${ms.toFixed(1)} ms for ${input()}`);
}
