import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { formatBytes, type ConfigLimits } from './limits.ts';
import { brokenFile, parseYamlFile, type ParsedFile } from './parse.ts';

/** One file as a scan sees it. `bytes` counts toward the limit on all files together. */
export type FileRead =
  | { readonly kind: 'gone' }
  | { readonly kind: 'unchanged'; readonly bytes: number }
  | { readonly kind: 'read'; readonly bytes: number; readonly hash: string; readonly parsed: ParsedFile };

/**
 * Reads and parses one file unless its content hash is `previousHash`. A file over
 * `maxFileBytes` is refused without being read whole (its size, not its text, is what identifies
 * it), so a 100 MB file costs a stat and a small read, not gigabytes of syntax tree.
 * `onHashed` hears about new content before it is parsed.
 */
export function readConfigFile(file: string, previousHash: string | undefined, limits: ConfigLimits, onHashed?: (hash: string, bytes: number) => void): FileRead {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { kind: 'gone' }; // deleted between listing and reading: same as gone
  }
  try {
    const stat = fs.fstatSync(fd);
    const content = readAtMost(fd, Math.min(stat.size, limits.maxFileBytes) + 1);
    if (content.length > limits.maxFileBytes) {
      const size = Math.max(stat.size, content.length);
      const hash = `oversize:${size}:${stat.mtimeMs}`;
      if (hash === previousHash) return { kind: 'unchanged', bytes: size };
      return { kind: 'read', bytes: size, hash, parsed: brokenFile([{ severity: 'error', file, message: `over a configuration limit: the file is ${formatBytes(size)}, more than the ${formatBytes(limits.maxFileBytes)} a file may hold` }]) };
    }
    const hash = createHash('sha256').update(content).digest('base64');
    if (hash === previousHash) return { kind: 'unchanged', bytes: content.length };
    onHashed?.(hash, content.length);
    return { kind: 'read', bytes: content.length, hash, parsed: parseYamlFile(content.toString('utf8'), file, limits) };
  } catch (err) {
    return { kind: 'read', bytes: 0, hash: `unreadable:${Date.now()}`, parsed: brokenFile([{ severity: 'error', file, message: `cannot read the file: ${(err as Error).message}` }]) };
  } finally {
    fs.closeSync(fd);
  }
}

/** Up to `max` bytes from `fd`; a file that grew since its stat is still read no further. */
function readAtMost(fd: number, max: number): Buffer {
  const buffer = Buffer.allocUnsafe(max);
  let filled = 0;
  while (filled < max) {
    const n = fs.readSync(fd, buffer, filled, max - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}
