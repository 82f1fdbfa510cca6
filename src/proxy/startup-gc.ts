import v8 from 'node:v8';
import { memoryReducingGc } from '../common/idle-gc.ts';

/**
 * The young generation's committed size from which giving it back is worth a GC: V8 grows it in
 * doublings up to 2 × 32 MiB while much of what a thread allocates survives, as when the serving
 * thread receives and compiles a large config (64 MiB at ready at 10k routes). The quickstart's is
 * 32 MiB at ready (module loading), where the GC gave back ~15 MiB for ~40–60 ms more CPU before
 * ready: left alone, so a small config starts as before. `SWITCHBOARD_SEMI_SPACE_MIB=8` caps it at 16.
 */
export const GROWN_NEW_SPACE_BYTES = 48 * 1024 * 1024;

function newSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * What the proxy runtime runs once its first config is compiled and swapped in, before it reports
 * ready (ProxyRuntime `afterFirstConfig`): a memory-reducing GC when the young generation has
 * grown. V8 keeps a grown young generation until a GC that reduces memory, which nothing asks for
 * while the thread only serves; nothing is served yet, so no request waits for it. Measured at 10k
 * routes: on a loaded machine (load 3–8, session 10 helper D) ~65–75 MiB less RSS at ready for
 * ~0.1–0.2 s, and the first edits after it looked slower (median +7 ms on the first, +15 on the
 * second); on a quiet machine (4 interleaved pairs, the lead, bench/RESULTS.md session 10) 242–255
 * against 277–280 MiB at ready, 281–285 against 300–320 after 30 edits, ready +25–100 ms, and the
 * first edits and the p99 the same within run-to-run spread (52–67 against 52–65 ms). So it is on
 * by default; `SWITCHBOARD_STARTUP_GC=0` turns it off (the idle GC's setting does not).
 */
export function startupGc(
  env: NodeJS.ProcessEnv = process.env,
  grownBytes: () => number = newSpaceBytes,
  collector: () => (() => void) | undefined = () => memoryReducingGc({ SWITCHBOARD_IDLE_GC: '1' }),
): (() => void) | undefined {
  if (!(enabled(env.SWITCHBOARD_STARTUP_GC) ?? true)) return undefined;
  return () => {
    if (grownBytes() < GROWN_NEW_SPACE_BYTES) return;
    collector()?.();
  };
}

/** `1`/`on` true, `0`/`off` false, anything else (unset) undefined. */
function enabled(setting: string | undefined): boolean | undefined {
  const value = setting?.trim().toLowerCase();
  if (value === '1' || value === 'on') return true;
  if (value === '0' || value === 'off') return false;
  return undefined;
}
