/**
 * fast-check properties over the request-path normalizer, through the same `fuzz()` the on-demand
 * fuzzer runs (fuzz/path.fuzz.ts): random bytes, and paths built from the pieces attackers use
 * (encoded and raw dots, slashes, backslashes, mixed-case escapes, queries). Every call returns
 * a canonical, idempotent path or the documented refusal, and returns fast.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assertPrompt } from './fuzz-bound.ts';
import { fuzz } from '../../fuzz/path.fuzz.ts';
import { normalizeTarget, PathRefusal } from '../../src/proxy/http/path.ts';

function timed(data: Buffer): void {
  assertPrompt(() => fuzz(data), () => `${data.length} bytes`);
}

const piece = fc.constantFrom(
  '/', '//', '.', '..', '%2e', '%2E', '%2e%2e', '.%2E', '%2f', '%2F', '%5c', '\\', '%00', '%', '%4', '%zz',
  '%61', '%41', '%7e', '%7E', '%3a', '%3A', '%c3%a9', 'admin', 'a', 'B', '~', '-', '_', '?', '?x=%2e%2e/../', '#', ';', ' ', '\u00e9',
);
const structured = fc.array(piece, { maxLength: 40 }).map((parts) => `/${parts.join('')}`);

describe('path normalizer fuzz properties', () => {
  it('random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => timed(Buffer.from(bytes))), { numRuns: 2_000 });
  });

  it('paths built from encoding tricks', () => {
    fc.assert(fc.property(structured, (path) => timed(Buffer.from(path, 'latin1'))), { numRuns: 3_000 });
  });

  it('no spelling of /admin/… normalizes to anything but /admin/… or a refusal', () => {
    const spell = fc.constantFrom('a', '%61');
    const noise = fc.array(fc.constantFrom('/', '/.', '/%2e', '/x/..', '/x/%2e%2E', '//'), { maxLength: 6 }).map((n) => n.join(''));
    fc.assert(fc.property(noise, spell, (prefix, a) => {
      const result = normalizeTarget(`${prefix}/${a}dmin/secret`);
      assert.ok(result instanceof PathRefusal || result === '/admin/secret', String(result));
    }), { numRuns: 1_000 });
  });

  it('a long hostile path stays linear', () => {
    const long = Buffer.from(`/${'%2e%2e/a/./'.repeat(20_000)}`, 'latin1');
    const t0 = performance.now();
    fuzz(long);
    assert.ok(performance.now() - t0 < 500, `${(performance.now() - t0).toFixed(0)} ms for ${long.length} bytes`);
  });
});
