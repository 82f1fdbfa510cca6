import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesSelector, namespaceSelected, parseNamespaceSelectors, type LabelSelector } from './namespace-selector.ts';

describe('namespace selectors', () => {
  const rows: { name: string; labels: Record<string, string>; selector: LabelSelector; match: boolean }[] = [
    { name: 'matchLabels equal', labels: { team: 'a' }, selector: { matchLabels: { team: 'a' } }, match: true },
    { name: 'matchLabels differs', labels: { team: 'b' }, selector: { matchLabels: { team: 'a' } }, match: false },
    { name: 'In', labels: { env: 'prod' }, selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'stage'] }] }, match: true },
    { name: 'In, key missing', labels: {}, selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }, match: false },
    { name: 'NotIn, key missing', labels: {}, selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, match: true },
    { name: 'NotIn, listed', labels: { env: 'prod' }, selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, match: false },
    { name: 'Exists', labels: { env: '' }, selector: { matchExpressions: [{ key: 'env', operator: 'Exists' }] }, match: true },
    { name: 'DoesNotExist', labels: { env: 'x' }, selector: { matchExpressions: [{ key: 'env', operator: 'DoesNotExist' }] }, match: false },
    { name: 'labels and expressions AND-ed', labels: { team: 'a', env: 'dev' }, selector: { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] }, match: false },
    { name: 'empty selector selects all', labels: {}, selector: {}, match: true },
  ];
  for (const row of rows) it(row.name, () => assert.equal(matchesSelector(row.labels, row.selector), row.match));

  it('entries are OR-ed and an empty list selects every namespace', () => {
    const selectors: LabelSelector[] = [{ matchLabels: { team: 'a' } }, { matchLabels: { team: 'b' } }];
    assert.equal(namespaceSelected({ team: 'b' }, selectors), true);
    assert.equal(namespaceSelected({ team: 'c' }, selectors), false);
    assert.equal(namespaceSelected({}, []), true);
  });

  it('parses the flag and refuses what is not a label selector', () => {
    assert.deepEqual(parseNamespaceSelectors('[{"matchLabels":{"team":"a"}}]'), [{ matchLabels: { team: 'a' } }]);
    assert.throws(() => parseNamespaceSelectors('{"matchLabels":{}}'), /JSON list/);
    assert.throws(() => parseNamespaceSelectors('[{"matchLabel":{"team":"a"}}]'), /unknown field matchLabel/);
    assert.throws(() => parseNamespaceSelectors('[{"matchExpressions":[{"key":"a","operator":"Has"}]}]'), /operator/);
    assert.throws(() => parseNamespaceSelectors('[{"matchExpressions":[{"key":"a","operator":"In"}]}]'), /values are required/);
  });
});
