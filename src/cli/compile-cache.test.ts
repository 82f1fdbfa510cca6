import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));
// Run in the CLI's process before anything else: says at exit whether Node's type stripper was loaded.
const PROBE = `data:text/javascript,process.on('exit', () => process.stderr.write('stripper loaded: ' + process.moduleLoadList.some((m) => m.includes('amaro')) + '\\n'))`;

/** `switchboard version` as a user starts it: no NODE_COMPILE_CACHE, the default directory under `tmp`. */
function version(tmp: string): string {
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
  // Node turns the cache on itself when NODE_COMPILE_CACHE is set (before any module is read), which
  // is not how a user starts it; and it reads NODE_DISABLE_COMPILE_CACHE as set even when empty.
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  const child = spawnSync(process.execPath, ['--import', PROBE, ENTRY, 'version'], { env, encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const line = /stripper loaded: (true|false)/.exec(child.stderr);
  assert.ok(line, child.stderr);
  return line[1] as string;
}

describe('compile cache (bin/switchboard.js)', () => {
  it('a start from a warm cache strips no TypeScript, so Node never loads its stripper', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-compile-cache-test-'));
    try {
      assert.equal(version(tmp), 'true', 'the first start strips and fills the cache');
      assert.equal(version(tmp), 'false', 'the second start reads every module from the cache');
      assert.ok(fs.readdirSync(tmp).some((name) => name.startsWith('switchboard-compile-cache-')), 'the default directory is under the OS temp directory');
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
