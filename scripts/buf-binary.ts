import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * buf ships one npm package per platform. The wrapper package `@bufbuild/buf` lists all of them
 * as optional dependencies, and the registry this project installs from serves only the Linux
 * ones, which leaves the lockfile unusable for `npm ci`. So we depend on the Linux x64 binary
 * package directly (optional: skipped elsewhere) and find it here.
 */
export function bufBinary(root: string): string {
  const path = join(root, 'node_modules', '@bufbuild', `buf-${process.platform}-${process.arch}`, 'bin', 'buf');
  if (!existsSync(path)) throw new Error(`buf is not installed for ${process.platform}-${process.arch}: protobuf code generation runs on linux-x64`);
  return path;
}

export function hasBuf(root: string): boolean {
  return existsSync(join(root, 'node_modules', '@bufbuild', `buf-${process.platform}-${process.arch}`, 'bin', 'buf'));
}
