// docs/policies.md ("What is not applied yet") is the user's copy of NOT_APPLIED and NOT_SERVED:
// the same rows, kinds and issues. A feature that lands must leave both, so this test compares them
// instead of trusting whoever removes a row to remember the other place.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { NOT_APPLIED, NOT_SERVED } from './not-applied.ts';

interface DocRow {
  readonly keys: readonly string[];
  readonly kinds: readonly string[] | undefined;
  readonly issue: number | undefined;
  readonly line: string;
}

const DOC = join(import.meta.dirname, '..', '..', '..', '..', 'docs', 'policies.md');

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/policies.md has the section "${heading}"`);
  const end = markdown.indexOf('\n## ', start + heading.length + 2);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The keys a docs row stands for: `scope:path` for field rows, `served:<what>` for whole objects. */
function keysOf(cell: string): string[] {
  const spans = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  if (cell.startsWith('ProxyBackend provider')) return spans.map((s) => `provider:${s}`);
  if (cell.startsWith('ProxyBackend')) return spans.map((s) => `served:ProxyBackend ${s}`);
  const object = /^(ProxyParameters|ProxyModel)\b/.exec(cell);
  if (object) return [`served:${object[1]}`];
  const [first, ...more] = spans;
  assert.ok(first?.includes('.'), `a field row names its path: ${cell}`);
  const scope = first.slice(0, first.indexOf('.'));
  const path = first.slice(scope.length + 1);
  // "`backend.tcp.keepalive.retries`, `.interval`": a sibling of the first path's last segment.
  const parent = path.includes('.') ? path.slice(0, path.lastIndexOf('.')) : '';
  const siblings = more.filter((s) => s.startsWith('.')).map((s) => (parent ? `${parent}${s}` : s.slice(1)));
  return [path, ...siblings].map((p) => `${scope}:${p}`);
}

function docRows(): DocRow[] {
  const text = section(readFileSync(DOC, 'utf8'), '## What is not applied yet');
  const lines = text.split('\n').filter((l) => l.startsWith('|'));
  assert.ok(lines.length > 2, 'the section has its table');
  return lines.slice(2).map((line) => {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    assert.equal(cells.length, 4, `a row has four cells: ${line}`);
    const [path, kinds, , builtBy] = cells as [string, string, string, string];
    const issue = /issue (\d+)/.exec(builtBy);
    return {
      keys: keysOf(path),
      kinds: kinds === 'any' || kinds === '–' || kinds === '-' ? undefined : kinds.split(',').map((k) => k.trim()).sort(),
      issue: issue ? Number(issue[1]) : undefined,
      line,
    };
  });
}

function tableRows(): Map<string, { kinds: readonly string[] | undefined; issue: number | undefined }> {
  const out = new Map<string, { kinds: readonly string[] | undefined; issue: number | undefined }>();
  for (const row of NOT_APPLIED) {
    // A provider row has no kinds in the table: providers exist only on ai backends, as the docs say.
    const kinds = row.scope === 'provider' ? ['ai'] : row.kinds ? [...row.kinds].sort() : undefined;
    out.set(`${row.scope}:${row.path}`, { kinds, issue: row.issue });
  }
  for (const [what, row] of Object.entries(NOT_SERVED)) out.set(`served:${what}`, { kinds: undefined, issue: row.issue });
  return out;
}

test('docs/policies.md lists exactly the rows of NOT_APPLIED and NOT_SERVED, with their kinds and issues', () => {
  const table = tableRows();
  const documented = new Set<string>();
  for (const row of docRows()) {
    for (const key of row.keys) {
      documented.add(key);
      const expected = table.get(key);
      assert.ok(expected, `docs/policies.md has a row NOT_APPLIED no longer has (${key}): ${row.line}`);
      assert.deepEqual(row.kinds, expected.kinds, `kinds of ${key} differ between docs and table: ${row.line}`);
      assert.equal(row.issue, expected.issue, `issue of ${key} differs between docs and table: ${row.line}`);
    }
  }
  const missing = [...table.keys()].filter((k) => !documented.has(k));
  assert.deepEqual(missing, [], 'rows of NOT_APPLIED / NOT_SERVED with no line in docs/policies.md');
});

test('the docs row parser reads sibling paths and object rows', () => {
  assert.deepEqual(keysOf('`backend.tcp.keepalive.retries`, `.interval`'), ['backend:tcp.keepalive.retries', 'backend:tcp.keepalive.interval']);
  assert.deepEqual(keysOf('`frontend.connect` with mode `Route` or `Tunnel`'), ['frontend:connect']);
  assert.deepEqual(keysOf('`backend.tcp`, `.tls`'), ['backend:tcp', 'backend:tls']);
  assert.deepEqual(keysOf('ProxyBackend provider `providerA.moderation`'), ['provider:providerA.moderation']);
  assert.deepEqual(keysOf('ProxyBackend `spec.a2a`'), ['served:ProxyBackend spec.a2a']);
  assert.deepEqual(keysOf('ProxyModel (the object)'), ['served:ProxyModel']);
});
