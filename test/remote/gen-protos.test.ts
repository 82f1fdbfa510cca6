/**
 * The committed config distribution code in src/distribute/remote/gen/ must be what
 * `node proto/switchboard/config/gen.ts` produces from proto/switchboard/config/v1/*.proto:
 * regenerate into a temporary directory and compare file by file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasBuf } from '../../scripts/buf-binary.ts';

const root = join(import.meta.dirname, '..', '..');
const committed = join(root, 'src', 'distribute', 'remote', 'gen', 'v1');

function files(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

describe('generated config distribution protobuf code', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'switchboard-config-protos-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('is up to date with proto/switchboard/config/v1 (run node proto/switchboard/config/gen.ts)', { skip: hasBuf(root) ? false : 'buf is not installed for this platform' }, () => {
    execFileSync(process.execPath, [join(root, 'proto', 'switchboard', 'config', 'gen.ts'), '--out', scratch], { cwd: root, stdio: 'pipe' });
    const fresh = files(join(scratch, 'src', 'distribute', 'remote', 'gen', 'v1'));
    const current = files(committed);
    assert.deepEqual([...current.keys()].sort(), [...fresh.keys()].sort());
    for (const [name, text] of fresh) assert.equal(current.get(name), text, `${name} is stale`);
    assert.ok(fresh.has('config_pb.js'));
  });
});
