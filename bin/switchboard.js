#!/usr/bin/env node
// Entry point for `npx switchboard`: the CLI is TypeScript run directly by Node >= 22.18 (type stripping).
import '../src/cli/main.ts';
