/**
 * The committed guardrail protocol code in src/proxy/mcp/guardrails/gen/ must be what
 * `node proto/mcp/gen.ts` produces from proto/mcp/guardrail.proto: regenerate into a temporary
 * directory and compare file by file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasBuf } from '../../scripts/buf-binary.ts';

const root = join(import.meta.dirname, '..', '..');
const committed = join(root, 'src', 'proxy', 'mcp', 'guardrails', 'gen');

function files(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

describe('generated MCP guardrail protobuf code', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'switchboard-mcp-protos-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('is up to date with proto/mcp/guardrail.proto (run node proto/mcp/gen.ts)', { skip: hasBuf(root) ? false : 'buf is not installed for this platform' }, () => {
    execFileSync(process.execPath, [join(root, 'proto', 'mcp', 'gen.ts'), '--out', scratch], { cwd: root, stdio: 'pipe' });
    const fresh = files(join(scratch, 'src', 'proxy', 'mcp', 'guardrails', 'gen'));
    const current = files(committed);
    assert.deepEqual([...current.keys()].sort(), [...fresh.keys()].sort());
    for (const [name, text] of fresh) assert.equal(current.get(name), text, `${name} is stale`);
    assert.ok(fresh.has('guardrail_pb.js'));
  });
});
