import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A memory-reducing full GC of this thread, or undefined when V8 will not give us one.
 *
 * V8 keeps what a burst of work made it grow — a young generation grown to its maximum, old-space
 * pages of garbage below the next GC's limit — and gives it back only in a GC that is asked to
 * reduce memory (V8's own memory reducer waits for signals Node never sends). Node has no API for
 * one, so the gc function is taken from a fresh context with `--expose-gc` on for the moment it is
 * created (the flag is process-wide: it is turned off again at once, so no later context sees it).
 *
 * Off unless `SWITCHBOARD_IDLE_GC=1` (or `on`): it trades edit latency for memory. Measured at 10k
 * routes with edits 3 s apart (bench/control-plane.ts --gap-ms 3000, session 9), every edit after
 * a quiet spell was served ~30–50 ms later with it (p50 84–101 vs 49–57 ms): the GC gives back the
 * young generation and more, and the next edit pays to grow it again and to run cold code — for
 * ~40–70 MiB less RSS. The target is edits ≤ 100 ms p99, so memory is the one that yields.
 */
export function memoryReducingGc(env: NodeJS.ProcessEnv = process.env): (() => void) | undefined {
  // Opt-in (the threads inherit the environment).
  const setting = env.SWITCHBOARD_IDLE_GC?.trim().toLowerCase();
  if (setting !== '1' && setting !== 'on') return undefined;
  const existing = (globalThis as { gc?: unknown }).gc;
  let gc: unknown = existing;
  if (typeof gc !== 'function') {
    try {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc');
    } catch {
      gc = undefined;
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  if (typeof gc !== 'function') return undefined;
  const collect = gc as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  return () => collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * Runs `collect` (a memory-reducing GC) once a thread that did work has been idle for `delayMs`
 * (issue 15: the config and parser threads hold on to tens of MiB after a translation or a parse).
 * Only for threads no request waits on: the GC stops this thread for 10–300 ms; work that
 * arrives meanwhile waits for it, which the delay makes rare (a burst of edits keeps it off). Once
 * per quiet spell: idle() after a GC with no work in between does nothing.
 */
export class IdleGc {
  readonly #delayMs: number;
  readonly #collect: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Work was done since the last GC. */
  #worked = false;

  constructor(delayMs: number, collect: (() => void) | undefined = memoryReducingGc()) {
    this.#delayMs = delayMs;
    this.#collect = collect;
  }

  /** Work starts: no GC until it is done. */
  busy(): void {
    this.#worked = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Work is done: the GC runs after `delayMs` unless more work starts first. */
  idle(): void {
    if (!this.#worked || !this.#collect || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#worked = false;
      try {
        this.#collect?.();
      } catch {
        // An optimisation only: a V8 that refuses the options keeps its memory.
      }
    }, this.#delayMs);
    // Never what keeps a thread alive.
    this.#timer.unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
