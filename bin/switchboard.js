#!/usr/bin/env node
// Entry point for `npx switchboard`: the CLI is TypeScript run directly by Node >= 22.18 (type stripping).
// The production build bundles this file as dist/switchboard.mjs (`npm run build`, scripts/build.ts):
// same order, same commands, without the per-module loading cost (what the Docker image runs).
// Imports are evaluated in order. First, when SWITCHBOARD_SEMI_SPACE_MIB asks for it, the
// long-running commands (run, proxy, controller) restart themselves with a smaller V8 young
// generation, a flag that cannot be set once the process runs (src/cli/relaunch.js, node-flags.js). Then the
// compile cache goes on, and the CLI is imported only then (a static import would be read, and its
// types stripped, before this module runs): a start from a warm cache strips no file and never
// loads Node's type stripper (~17 MiB of RSS; src/cli/compile-cache.js).
import '../src/cli/relaunch.js';
import '../src/cli/compile-cache.js';

await import('../src/cli/main.ts');
