/**
 * The committed OTLP decoding code in test/otlp/gen/ must be what `node test/otlp/proto/gen.ts`
 * produces from the opentelemetry-proto files in test/otlp/proto: regenerate into a temporary
 * directory and compare file by file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasBuf } from '../../scripts/buf-binary.ts';

const root = join(import.meta.dirname, '..', '..');
const committed = join(root, 'test', 'otlp', 'gen');

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), readFileSync(path, 'utf8'));
  }
  return out;
}

describe('generated OTLP protobuf code', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'switchboard-otlp-protos-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('is up to date with test/otlp/proto (run node test/otlp/proto/gen.ts)', { skip: hasBuf(root) ? false : 'buf is not installed for this platform' }, () => {
    execFileSync(process.execPath, [join(root, 'test', 'otlp', 'proto', 'gen.ts'), '--out', scratch], { cwd: root, stdio: 'pipe' });
    const fresh = files(join(scratch, 'test', 'otlp', 'gen'));
    const current = files(committed);
    assert.deepEqual([...current.keys()].sort(), [...fresh.keys()].sort());
    for (const [name, text] of fresh) assert.equal(current.get(name), text, `${name} is stale`);
    assert.ok(fresh.has(join('opentelemetry', 'proto', 'collector', 'trace', 'v1', 'trace_service_pb.js')));
  });
});
