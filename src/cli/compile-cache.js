/**
 * Node's on-disk module compile cache for this process and its worker threads (issue 15: time to
 * ready and memory). The CLI is TypeScript run directly: every start strips the types of ~1,200
 * modules and compiles them, three times (the serving thread, the config thread, the parser
 * thread). With the cache a start reuses the stripped and compiled code of the previous one
 * (module loading ~1.3 → ~0.8 s of CPU on this machine; a worker ready ~2 s → ~0.6 s under load).
 * Node checks each entry against its source, so an edited file is compiled again.
 *
 * Plain JavaScript, not TypeScript: a thread that strips the types of even one file loads Node's
 * TypeScript stripper (a WebAssembly module, ~17 MiB of RSS held for the life of the process).
 * bin/switchboard.js imports this before the first .ts module, so a process started from a warm
 * cache never strips anything; `node src/cli/main.ts` (development) strips main.ts itself first.
 *
 * `NODE_COMPILE_CACHE` (a directory) is honoured when set and `NODE_DISABLE_COMPILE_CACHE=1` turns
 * the cache off, as for node itself. The default directory is this user's own (created 0700 in the
 * OS temp directory); one another user could write to is not used, so nobody else can hand this
 * process code.
 */
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** @returns {string | undefined} */
function cacheDirectory() {
  const configured = process.env.NODE_COMPILE_CACHE;
  if (configured) return configured;
  const uid = process.getuid?.() ?? 0;
  const directory = path.join(os.tmpdir(), `switchboard-compile-cache-${uid}`);
  try {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    const stat = fs.statSync(directory);
    // Ours and writable by us alone, or not at all.
    if (!stat.isDirectory() || (process.getuid && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return undefined;
    return directory;
  } catch {
    return undefined;
  }
}

// Evaluated once per process however it is reached (bin/switchboard.js, then main.ts: one module).
// With NODE_COMPILE_CACHE set Node turned the cache on already; enabling it again is a no-op, and the
// flush at exit is still needed.
if (process.env.NODE_DISABLE_COMPILE_CACHE !== '1' && typeof module.enableCompileCache === 'function') {
  const directory = cacheDirectory();
  if (directory) {
    try {
      module.enableCompileCache(directory);
      // Worker threads read it when they start: they compile the translator and the parser.
      process.env.NODE_COMPILE_CACHE = directory;
      // The CLI ends with process.exit(), which would leave the new entries unwritten.
      process.once('exit', () => module.flushCompileCache());
    } catch {
      // A read-only file system or the like: start without the cache.
    }
  }
}
