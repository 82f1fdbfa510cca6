/**
 * The committed protobuf code in src/proxy/ext/gen/ must be what `npm run gen:protos` produces
 * from the installed @grpc/grpc-js-xds protos and protoc-gen-es: regenerate into a temporary
 * directory and compare file by file.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasBuf } from '../../scripts/buf-binary.ts';
import assert from 'node:assert/strict';

const root = join(import.meta.dirname, '..', '..');
const committed = join(root, 'src', 'proxy', 'ext', 'gen');

function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

describe('generated Envoy protobuf code', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'switchboard-protos-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  // buf's binary is installed for linux-x64 only (scripts/buf-binary.ts); CI runs there.
  it('is up to date with proto/buf.gen.yaml and the installed protos (run npm run gen:protos)', { skip: hasBuf(root) ? false : 'buf is not installed for this platform' }, () => {
    execFileSync(process.execPath, [join(root, 'scripts', 'gen-protos.ts'), '--out', scratch], { cwd: root, stdio: 'pipe' });
    const fresh = filesUnder(join(scratch, 'src', 'proxy', 'ext', 'gen'));
    const current = filesUnder(committed);
    assert.deepEqual([...current.keys()].sort(), [...fresh.keys()].sort());
    for (const [name, text] of fresh) assert.equal(current.get(name), text, `${name} is stale`);
    assert.ok(fresh.has(join('envoy', 'service', 'auth', 'v3', 'external_auth_pb.js')));
  });
});
