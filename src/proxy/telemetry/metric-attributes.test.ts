import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileMetricAttributes, labelName } from './metric-attributes.ts';

describe('metrics.attributes label names', () => {
  const rows = [
    { name: 'a plain name stays', input: 'team', want: 'team' },
    { name: 'dots and dashes become underscores', input: 'user.tier-x', want: 'user_tier_x' },
    { name: 'a leading digit is prefixed', input: '1st', want: '_1st' },
    { name: 'a reserved __ name is prefixed', input: '__name__', want: 'attr__name__' },
  ];
  for (const row of rows) it(row.name, () => assert.equal(labelName(row.input), row.want));
});

describe('compileMetricAttributes', () => {
  it('drops and reports built-in labels, duplicates and invalid CEL; keeps the rest', () => {
    const reports: string[] = [];
    const compiled = compileMetricAttributes([
      { name: 'team', expression: 'request.headers["x-team"]' },
      { name: 'route', expression: '"x"' },
      { name: 'team', expression: '"again"' },
      { name: 'bad', expression: 'request.(' },
    ], (m) => reports.push(m));
    assert.deepEqual(compiled.map((a) => a.label), ['team']);
    assert.equal(reports.length, 3);
    assert.match(reports.join('\n'), /"route".*already used[\s\S]*"team".*already used[\s\S]*"bad": invalid CEL/);
  });
});
