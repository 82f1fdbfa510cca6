import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { orderBySpecificity, parseModelPattern, selectModel, type MatchableModel, type ModelPattern, type Visibility } from './model-match.ts';

function model(id: string, written: string | undefined, visibility: Visibility = 'Public', created?: string): MatchableModel {
  const pattern = parseModelPattern(written, id.split('/')[1]);
  if ('error' in pattern) throw new Error(pattern.error);
  return { id, pattern, visibility, ...(created ? { created } : {}) };
}

describe('parseModelPattern', () => {
  const rows: { name: string; written: string | undefined; want: ModelPattern | 'error' }[] = [
    { name: 'absent: the object name exactly', written: undefined, want: { kind: 'exact', name: 'obj' } },
    { name: 'exact', written: 'gpt-4o', want: { kind: 'exact', name: 'gpt-4o' } },
    { name: 'suffix wildcard', written: 'gpt-*', want: { kind: 'startsWith', literal: 'gpt-' } },
    { name: 'prefix wildcard', written: '*-latest', want: { kind: 'endsWith', literal: '-latest' } },
    { name: 'any', written: '*', want: { kind: 'any' } },
    { name: 'star in the middle', written: 'gpt-*-mini', want: 'error' },
    { name: 'stars at both ends', written: '*gpt*', want: 'error' },
    { name: 'two stars', written: '**', want: 'error' },
    { name: 'empty', written: '', want: 'error' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const got = parseModelPattern(row.written, 'obj');
      if (row.want === 'error') assert.ok('error' in got, JSON.stringify(got));
      else assert.deepEqual(got, row.want);
    });
  }
});

describe('selectModel: most specific wins', () => {
  const all = [
    model('ai/any', '*'),
    model('ai/gpt', 'gpt-*'),
    model('ai/gpt4o', 'gpt-4o-*'),
    model('ai/latest', '*-latest'),
    model('ai/mini', '*mini'),
    model('ai/gpt-4o', undefined),
    model('ai/secret', 'secret-*', 'Internal'),
  ];
  // List order must not matter: try the models reversed too.
  const orders = { written: orderBySpecificity(all), reversed: orderBySpecificity([...all].reverse()) };
  const rows: { name: string; model: string; want: string | undefined; internal?: boolean }[] = [
    { name: 'exact (the object name) beats every wildcard', model: 'gpt-4o', want: 'ai/gpt-4o' },
    { name: 'the longer suffix wildcard beats the shorter', model: 'gpt-4o-2024', want: 'ai/gpt4o' },
    { name: 'a suffix wildcard beats *', model: 'gpt-3.5', want: 'ai/gpt' },
    { name: 'a longer prefix wildcard beats a shorter suffix wildcard', model: 'gpt-x-latest', want: 'ai/latest' },
    { name: 'equal length: the suffix wildcard (starts with) wins over the prefix one', model: 'gpt-mini', want: 'ai/gpt' },
    { name: '* catches the rest', model: 'claude-3', want: 'ai/any' },
    { name: 'Internal is not requestable by a client', model: 'secret-1', want: 'ai/any' },
    { name: 'Internal is selectable by a virtual model', model: 'secret-1', want: 'ai/secret', internal: true },
  ];
  for (const [order, list] of Object.entries(orders)) {
    for (const row of rows) {
      it(`${row.name} (${order})`, () => {
        assert.equal(selectModel(list, row.model, { internal: row.internal })?.id, row.want);
      });
    }
  }

  it('nothing matches without a * model', () => {
    assert.equal(selectModel(orderBySpecificity([model('ai/gpt', 'gpt-*')]), 'claude'), undefined);
  });

  it('two equal patterns: the older object wins, then namespace/name', () => {
    const older = model('b/x', 'gpt-*', 'Public', '2024-01-01T00:00:00Z');
    const newer = model('a/x', 'gpt-*', 'Public', '2025-01-01T00:00:00Z');
    assert.equal(selectModel(orderBySpecificity([newer, older]), 'gpt-1')?.id, 'b/x');
    const untimed = [model('b/y', 'gpt-*'), model('a/y', 'gpt-*')];
    assert.equal(selectModel(orderBySpecificity(untimed), 'gpt-1')?.id, 'a/y');
  });
});
