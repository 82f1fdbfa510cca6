import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findWatchedKind, groupOf, WATCHED_KINDS } from './kinds.ts';

describe('findWatchedKind', () => {
  it('finds every watched kind by its group and name, the first of a group and kind as a search of WATCHED_KINDS would', () => {
    for (const kind of WATCHED_KINDS) {
      const first = WATCHED_KINDS.find((k) => k.kind === kind.kind && groupOf(k.apiVersion) === groupOf(kind.apiVersion));
      assert.equal(findWatchedKind(groupOf(kind.apiVersion), kind.kind), first, `${kind.apiVersion} ${kind.kind}`);
    }
  });

  const unknown: [string, string, string][] = [
    ['a kind of another group', 'apps', 'Gateway'],
    ['an unknown kind of a watched group', 'gateway.networking.k8s.io', 'Deployment'],
    ['the core group asked by a group name', 'core', 'Service'],
  ];
  for (const [name, group, kind] of unknown) it(`is undefined for ${name}`, () => assert.equal(findWatchedKind(group, kind), undefined));
});
