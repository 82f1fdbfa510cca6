import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile, createActivation } from './index.ts';

/**
 * A cel-spec-like conformance table: standard CEL (no Switchboard functions) with the result the
 * spec requires. `error: true` rows must fail (at compile or evaluation time). The pass count is
 * recorded in docs/cel.md; rows where the library deviates from the spec are listed in
 * `deviations` with the behaviour we observe, so a library upgrade that fixes one shows up here.
 */

type Row = { name: string; expr: string; want?: unknown; error?: true };

const ts = (s: string) => new Date(s);

const rows: Row[] = [
  // arithmetic
  { name: 'int addition and precedence', expr: '1 + 2 * 3', want: 7n },
  { name: 'int division truncates', expr: '7 / 2', want: 3n },
  { name: 'int modulo', expr: '-7 % 3', want: -1n },
  { name: 'double arithmetic', expr: '1.5 * 2.0', want: 3 },
  { name: 'unary minus', expr: '-(3 - 5)', want: 2n },
  { name: 'int overflow is an error', expr: '9223372036854775807 + 1', error: true },
  { name: 'division by zero is an error', expr: '1 / 0', error: true },
  { name: 'uint literal', expr: '3u + 4u == 7u', want: true },
  { name: 'mixed int and double do not add', expr: '1 + 1.0', error: true },
  { name: 'heterogeneous numeric comparison', expr: '1 < 1.5', want: true },
  // comparison and logic
  { name: 'string ordering', expr: '"abc" < "abd"', want: true },
  { name: 'bool ordering', expr: 'false < true', want: true },
  { name: 'and short-circuits an error', expr: 'false && (1 / 0 == 1)', want: false },
  { name: 'or absorbs an error', expr: '(1 / 0 == 1) || true', want: true },
  { name: 'not', expr: '!false', want: true },
  { name: 'ternary', expr: '2 > 1 ? "yes" : "no"', want: 'yes' },
  { name: 'ternary needs bool condition', expr: '1 ? 2 : 3', error: true },
  { name: 'null equality', expr: 'null == null', want: true },
  // strings
  { name: 'string concatenation', expr: '"ab" + "cd"', want: 'abcd' },
  { name: 'size counts code points', expr: 'size("héllo")', want: 5n },
  { name: 'contains', expr: '"gateway".contains("tew")', want: true },
  { name: 'startsWith', expr: '"gateway".startsWith("gate")', want: true },
  { name: 'endsWith', expr: '"gateway".endsWith("way")', want: true },
  { name: 'matches is a partial match', expr: '"gateway".matches("te+w")', want: true },
  { name: 'in on strings is not standard', expr: '"a" in "abc"', error: true },
  { name: 'raw string', expr: 'r"a\\nb".size()', want: 4n },
  { name: 'escape sequences', expr: '"a\\tb".size()', want: 3n },
  { name: 'triple-quoted string', expr: '"""x"y"""', want: 'x"y' },
  // bytes
  { name: 'bytes literal size', expr: 'size(b"abc")', want: 3n },
  { name: 'bytes concatenation', expr: 'b"ab" + b"c" == b"abc"', want: true },
  // lists
  { name: 'list index', expr: '[1, 2, 3][1]', want: 2n },
  { name: 'list index out of range', expr: '[1][3]', error: true },
  { name: 'list concatenation', expr: '[1] + [2, 3]', want: [1n, 2n, 3n] },
  { name: 'list membership', expr: '2 in [1, 2, 3]', want: true },
  { name: 'list size', expr: 'size([1, 2, 3])', want: 3n },
  { name: 'list equality', expr: '[1, 2] == [1, 2]', want: true },
  // maps
  { name: 'map index', expr: '{"a": 1}["a"]', want: 1n },
  { name: 'map field selection', expr: '{"a": {"b": true}}.a.b', want: true },
  { name: 'map missing key is an error', expr: '{"a": 1}["b"]', error: true },
  { name: 'map key membership', expr: '"a" in {"a": 1}', want: true },
  { name: 'map size', expr: 'size({"a": 1, "b": 2})', want: 2n },
  { name: 'duplicate map key is an error', expr: '{"a": 1, "a": 2}', error: true },
  // macros
  { name: 'all', expr: '[1, 2, 3].all(x, x > 0)', want: true },
  { name: 'exists', expr: '[1, 2, 3].exists(x, x == 2)', want: true },
  { name: 'exists_one', expr: '[1, 2, 3].exists_one(x, x > 2)', want: true },
  { name: 'map macro', expr: '[1, 2].map(x, x * 10)', want: [10n, 20n] },
  { name: 'filter macro', expr: '[1, 2, 3, 4].filter(x, x % 2 == 0)', want: [2n, 4n] },
  { name: 'all over map keys', expr: '{"a": 1, "b": 2}.all(k, k.size() == 1)', want: true },
  { name: 'exists absorbs errors when true', expr: '[0, 1].exists(x, 1 / x == 1)', want: true },
  { name: 'has on present field', expr: 'has({"a": 1}.a)', want: true },
  { name: 'has on absent field', expr: 'has({"a": 1}.b)', want: false },
  // conversions and types
  { name: 'int from string', expr: 'int("42")', want: 42n },
  { name: 'int from bad string', expr: 'int("4x")', error: true },
  { name: 'double from string', expr: 'double("2.5")', want: 2.5 },
  { name: 'string from int', expr: 'string(42)', want: '42' },
  { name: 'string from bytes', expr: 'string(b"hi")', want: 'hi' },
  { name: 'int truncates double', expr: 'int(2.9)', want: 2n },
  { name: 'bool from string', expr: 'bool("true")', want: true },
  { name: 'type of int', expr: 'type(1) == int', want: true },
  { name: 'type of string', expr: 'type("a") == string', want: true },
  { name: 'dyn hides the static type', expr: 'dyn(1) == 1', want: true },
  // timestamps and durations
  { name: 'timestamp parse', expr: 'timestamp("2024-01-15T10:00:00Z")', want: ts('2024-01-15T10:00:00Z') },
  { name: 'timestamp plus duration', expr: 'timestamp("2024-01-15T10:00:00Z") + duration("90m") == timestamp("2024-01-15T11:30:00Z")', want: true },
  { name: 'timestamp difference', expr: 'timestamp("2024-01-15T11:00:00Z") - timestamp("2024-01-15T10:00:00Z") == duration("1h")', want: true },
  { name: 'duration comparison', expr: 'duration("1500ms") > duration("1s")', want: true },
  { name: 'duration accessor', expr: 'duration("2h30m").getMinutes()', want: 150n },
  { name: 'timestamp accessor', expr: 'timestamp("2024-01-15T10:20:30Z").getHours()', want: 10n },
  { name: 'bad duration is an error', expr: 'duration("soon")', error: true },
  { name: 'string of duration', expr: 'string(duration("1m"))', want: '60s' },
  { name: 'string of timestamp', expr: 'string(timestamp("2024-01-15T10:00:00Z"))', want: '2024-01-15T10:00:00Z' },
];

/** Rows where @marcbachmann/cel-js differs from cel-spec: what we observe instead. */
const deviations: Record<string, { observed: unknown }> = {
  // The library only accepts has() on a select chain rooted at a variable (all of ours are).
  'has on present field': { observed: 'error' },
  'has on absent field': { observed: 'error' },
  // The last duplicate wins instead of an error.
  'duplicate map key is an error': { observed: { a: 2n } },
};

function run(expr: string): { ok: true; value: unknown } | { ok: false } {
  const compiled = compile(expr);
  if (!compiled.ok) return { ok: false };
  const r = compiled.program.evaluate(createActivation({}));
  return r.ok ? { ok: true, value: r.value } : { ok: false };
}

describe('CEL conformance table', () => {
  for (const row of rows) {
    it(row.name, () => {
      const got = run(row.expr);
      const deviation = deviations[row.name];
      if (deviation !== undefined) {
        assert.deepEqual(got.ok ? got.value : 'error', deviation.observed, 'a known deviation changed: update the table and docs/cel.md');
        return;
      }
      if (row.error) assert.equal(got.ok, false, `expected an error, got ${got.ok ? String(got.value) : ''}`);
      else {
        assert.ok(got.ok, 'expression failed');
        assert.deepEqual(got.value, row.want);
      }
    });
  }

  it('records the table size and deviations for docs/cel.md', () => {
    assert.equal(rows.length, 70);
    assert.equal(Object.keys(deviations).length, 3);
  });
});
