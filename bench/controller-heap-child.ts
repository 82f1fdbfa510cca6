/**
 * `switchboard controller` with heap snapshots on demand, for bench/control-plane-controller.ts
 * (`BENCH_HEAP_DIR=DIR`): takes the controller's flags, starts it as `bin/switchboard.js
 * controller` would, and on each SIGUSR2 writes `main-<n>.heapsnapshot` (the serving thread) and
 * `translator-<n>.heapsnapshot` (the translator thread) to $BENCH_HEAP_DIR plus `heap-<n>.json`
 * (both threads' heap statistics and the process' memory), the last file written once both
 * snapshots are complete. Taking a snapshot collects garbage first: the sizes are what is retained.
 * Summarise the snapshots with bench/controller-heap-summary.ts.
 */
import { once } from 'node:events';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import v8 from 'node:v8';
import { parseControllerArgs } from '../src/cli/commands/controller-args.ts';
import { startController } from '../src/cli/commands/controller.ts';
import { memoryReducingGc } from '../src/common/idle-gc.ts';

const dir = process.env.BENCH_HEAP_DIR;
if (!dir) throw new Error('BENCH_HEAP_DIR must name the folder the snapshots go to');
/** BENCH_HEAP_STATS_ONLY=1: heap statistics only, no snapshot (no forced GC: what the process holds as it runs). */
const statsOnly = process.env.BENCH_HEAP_STATS_ONLY === '1';
const options = parseControllerArgs(process.argv.slice(2));
if (options === 'help') throw new Error('--help is not a controller run');
// Listened for before starting: the bench signals as soon as /healthz/ready answers, which can
// be before startController() resolves (SIGUSR2's default action ends the process).
const started = startController(options);

let taken = 0;
let busy = Promise.resolve();
process.on('SIGUSR2', () => {
  busy = busy.then(async () => {
    const n = taken++;
    // First what the process holds as it runs (no GC forced), then the snapshots (each collects garbage first).
    const before = { memory: process.memoryUsage(), main: v8.getHeapStatistics(), mainSpaces: v8.getHeapSpaceStatistics(), translator: (await (await started).translator.heap(false))?.statistics, smaps: readFileSync('/proc/self/smaps_rollup', 'utf8') };
    // BENCH_HEAP_GC=1: what a memory-reducing full GC of the serving thread gives back to the OS.
    const gc = process.env.BENCH_HEAP_GC === '1' ? memoryReducingGc({ SWITCHBOARD_IDLE_GC: '1' }) : undefined;
    let afterGc: { readonly memory: NodeJS.MemoryUsage; readonly gcMs: number } | undefined;
    if (gc) {
      const at = performance.now();
      gc();
      // A moment for V8 to hand freed pages back (the sweeper, the page pool).
      await new Promise((ok) => setTimeout(ok, 500));
      afterGc = { gcMs: performance.now() - at, memory: process.memoryUsage() };
    }
    const mainFile = statsOnly ? undefined : v8.writeHeapSnapshot(join(dir, `main-${n}.heapsnapshot`));
    const translator = statsOnly ? undefined : await (await started).translator.heap();
    if (translator?.snapshot) await pipeline(translator.snapshot as NodeJS.ReadableStream, createWriteStream(join(dir, `translator-${n}.heapsnapshot`)));
    writeFileSync(join(dir, `heap-${n}.json`), JSON.stringify({
      before, afterGc, afterSnapshots: statsOnly ? undefined : { memory: process.memoryUsage(), main: v8.getHeapStatistics(), translator: translator?.statistics }, mainFile,
    }, null, 1));
  });
});
await once(process, 'SIGTERM');
await (await started).stop();
process.exit(0);
