import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from './duration.ts';

describe('parseDuration', () => {
  const cases: { name: string; text: string; ms: number | null }[] = [
    { name: 'seconds', text: '10s', ms: 10_000 },
    { name: 'milliseconds', text: '500ms', ms: 500 },
    { name: 'minutes are not milliseconds', text: '1m', ms: 60_000 },
    { name: 'hours', text: '2h', ms: 7_200_000 },
    { name: 'mixed groups', text: '1h2m3s4ms', ms: 3_723_004 },
    { name: 'zero disables', text: '0s', ms: 0 },
    { name: 'five digits', text: '99999ms', ms: 99_999 },
    { name: 'six digits rejected', text: '100000ms', ms: null },
    { name: 'five groups rejected', text: '1h1m1s1ms1s', ms: null },
    { name: 'fractions rejected', text: '1.5s', ms: null },
    { name: 'no unit rejected', text: '10', ms: null },
    { name: 'unknown unit rejected', text: '10d', ms: null },
    { name: 'empty rejected', text: '', ms: null },
    { name: 'spaces rejected', text: '1s 2s', ms: null },
  ];
  for (const c of cases) it(c.name, () => assert.equal(parseDuration(c.text), c.ms));
});
