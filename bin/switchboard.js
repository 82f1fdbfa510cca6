#!/usr/bin/env node
// Entry point for `npx switchboard`: the CLI is TypeScript run directly by Node >= 22.18 (type stripping).
// The compile cache goes on first, and the CLI is imported only then (a static import would be read,
// and its types stripped, before this module runs): a start from a warm cache strips no file and
// never loads Node's type stripper (~17 MiB of RSS; src/cli/compile-cache.js).
import '../src/cli/compile-cache.js';

await import('../src/cli/main.ts');
