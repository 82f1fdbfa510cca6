import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LabelSelector } from '../../api/gateway/index.ts';
import { selectorMatches } from './selector.ts';

describe('selectorMatches', () => {
  const labels = { team: 'a', env: 'prod' };
  const cases: { name: string; selector: LabelSelector | undefined; want: boolean }[] = [
    { name: 'absent selector matches', selector: undefined, want: true },
    { name: 'empty selector matches', selector: {}, want: true },
    { name: 'matchLabels hit', selector: { matchLabels: { team: 'a' } }, want: true },
    { name: 'matchLabels miss', selector: { matchLabels: { team: 'b' } }, want: false },
    { name: 'In hit', selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'stage'] }] }, want: true },
    { name: 'In on missing label', selector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['x'] }] }, want: false },
    { name: 'NotIn on missing label', selector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['x'] }] }, want: true },
    { name: 'NotIn hit', selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, want: false },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] }, want: true },
    { name: 'DoesNotExist', selector: { matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, want: false },
    { name: 'both parts must hold', selector: { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['dev'] }] }, want: false },
    { name: 'unknown operator matches nothing', selector: { matchExpressions: [{ key: 'team', operator: 'Equals' as 'In', values: ['a'] }] }, want: false },
  ];
  for (const c of cases) it(c.name, () => assert.equal(selectorMatches(c.selector, labels), c.want));
});
