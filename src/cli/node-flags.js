/**
 * The V8 flag the long-running commands can start with (issue 15: memory at 10k routes): a smaller
 * young generation. V8 grows a thread's young generation (two semi-spaces) while much of what is
 * allocated survives — the serving thread receiving and compiling a 10k-route config does — up to
 * 2 × 32 MiB on 64-bit, and nothing shrinks it again short of a memory-reducing full GC (a
 * 100+ ms pause on the serving thread). With 8 MiB semi-spaces the serving thread keeps ~16 MiB
 * instead of ~60 (bench/RESULTS.md, session 9). The flag is V8's, for the whole process: it also
 * replaces the young-generation sizes the config and parser threads ask for in their
 * resourceLimits (V8 lets the flag win), so 8 keeps the config thread's 16 MiB as it was.
 *
 * It cannot be set once the process runs (V8 sizes a heap when it is created), so the CLI starts
 * itself again with it: `process.execve` replaces the process image (same pid, same stdio, the
 * signals of a container's PID 1 unchanged) before any of the CLI's modules load, ~30 ms.
 *
 * Opt-in, because the smaller young generation costs every request: on the hot path
 * (`bench/run.ts --workers 1`, quiet machine, session 9) 50.0–53.9 CPU-µs per request with 8 or 16
 * against 47.3–47.6 without, and a p99 at one connection of 0.48–0.57 against 0.30–0.33 ms (more
 * scavenges); it saves ~50 MiB of RSS at 10k routes and nothing on a small config. So it is for an
 * operator whose memory limit binds before CPU does — except `controller`, which proxies no
 * request and starts with the suggested size by default (SMALL_BY_DEFAULT).
 *
 * `SWITCHBOARD_SEMI_SPACE_MIB`: unset → V8's own sizing (no relaunch), the suggested size for the
 * controller; `0` or `off` → V8's own sizing for every command; a whole number
 * 1–1024 → that size (8 is what the memory numbers in bench/RESULTS.md were measured with). A `--max-semi-space-size` already given to node (command line or
 * NODE_OPTIONS) is left as it is. Platforms without `process.execve` (Windows) start without it.
 *
 * Plain JavaScript for the reason compile-cache.js is: bin/switchboard.js runs it before the first
 * .ts module, so no type stripper is loaded in either process.
 */

/** The semi-space size, in MiB, measured for memory at 10k routes (bench/RESULTS.md, session 9): what the docs suggest. */
export const SUGGESTED_SEMI_SPACE_MIB = 8;

/** Commands that serve or translate for as long as they run; the rest exit at once and keep V8's sizing. */
const LONG_RUNNING = new Set(['run', 'proxy', 'controller']);

/**
 * Commands that start with the suggested size unless SWITCHBOARD_SEMI_SPACE_MIB says otherwise
 * (`0`/`off`: V8's sizing). The controller proxies no request, so the per-request CPU the small
 * young generation costs `run` and `proxy` does not apply to it; at 10k routes it holds ~90 MiB
 * less at ready and ~100 MiB less after the leader's status write and edits, edits as fast
 * (bench/RESULTS.md, session 10).
 */
const SMALL_BY_DEFAULT = new Set(['controller']);

const FLAG = '--max-semi-space-size';

/**
 * The semi-space size to relaunch with, or undefined to start as we are.
 * @param {{ command: string | undefined, execArgv: readonly string[], env: Record<string, string | undefined> }} input
 * @returns {number | undefined}
 */
export function semiSpaceToSet({ command, execArgv, env }) {
  if (command === undefined || !LONG_RUNNING.has(command)) return undefined;
  // The operator's own flag (or ours, after the relaunch) stands.
  if (execArgv.some(mentionsFlag) || (env.NODE_OPTIONS ?? '').split(/\s+/).some(mentionsFlag)) return undefined;
  const configured = env.SWITCHBOARD_SEMI_SPACE_MIB?.trim();
  if (configured === undefined || configured === '') return SMALL_BY_DEFAULT.has(command) ? SUGGESTED_SEMI_SPACE_MIB : undefined;
  if (configured === '0' || configured.toLowerCase() === 'off') return undefined;
  const mib = /^\d{1,4}$/.test(configured) ? Number(configured) : NaN;
  if (!(mib >= 1 && mib <= 1024)) throw new Error(`SWITCHBOARD_SEMI_SPACE_MIB must be a whole number of MiB from 1 to 1024, 0 or off (got "${configured}")`);
  return mib;
}

/** @param {string} arg */
function mentionsFlag(arg) {
  // V8 accepts both spellings.
  return arg.replaceAll('_', '-').startsWith(FLAG);
}

/**
 * Replaces this process with node started with the semi-space flag when the command wants it;
 * returns (doing nothing) otherwise, or when the platform cannot (then V8's sizing applies). A
 * malformed SWITCHBOARD_SEMI_SPACE_MIB is a usage error: exit 2, as for a bad flag.
 */
export function relaunchWithNodeFlags() {
  let mib;
  try {
    mib = semiSpaceToSet({ command: process.argv[2], execArgv: process.execArgv, env: process.env });
  } catch (err) {
    process.stderr.write(`error: ${/** @type {Error} */ (err).message}\n`);
    process.exit(2);
  }
  if (mib === undefined || typeof process.execve !== 'function') return;
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, `${FLAG}=${mib}`, ...process.argv.slice(1)], process.env);
  } catch (err) {
    // execve failed before replacing us (the binary gone, a sandbox forbidding it): run as we are.
    process.emitWarning(`could not restart with ${FLAG}=${mib} (${/** @type {Error} */ (err).message}); V8's default young generation applies`);
  }
}
