import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResourceCache } from './assemble.ts';
import type { Delta, Resource, ResourceKind } from './split.ts';
import { resourceId, sliceVersion } from './split.ts';
import { schemeFor, sortedVersion, sumVersion, SystemVersionScheme } from './version.ts';

const resource = (kind: ResourceKind, name: string, tag = 0): Resource => {
  const json = JSON.stringify({ key: name, tag, ...(kind === 'bind' ? { port: 80, listeners: [] } : { rules: [] }) });
  return { kind, name, version: `v${tag}-${name}`, json };
};

describe('schemeFor: the scheme a controller answers a proxy with', () => {
  const rows: [string, SystemVersionScheme, SystemVersionScheme][] = [
    ['a proxy built before schemes (field unset) gets SORTED', SystemVersionScheme.SORTED, SystemVersionScheme.SORTED],
    ['a proxy that checks SUM gets SUM', SystemVersionScheme.SUM, SystemVersionScheme.SUM],
    ['a newer proxy (a scheme this build does not know) gets the newest this build speaks', 7 as SystemVersionScheme, SystemVersionScheme.SUM],
  ];
  for (const [name, asked, answered] of rows) it(name, () => assert.equal(schemeFor(asked), answered));
});

describe('SORTED is the first scheme unchanged (an old proxy checks it)', () => {
  it('equals the hash of the sorted id\\0version lines, whatever the order', () => {
    const entries: [string, string][] = [['route\0b', '2'], ['bind\0a', '1'], ['backend\0c', '3']];
    assert.equal(sortedVersion(entries), sortedVersion([...entries].reverse()));
    assert.equal(sliceVersion(new Map(entries)), sortedVersion(entries));
    assert.equal(sortedVersion(entries).length, 22);
  });
});

describe('SUM: a running total updated by the change alone', () => {
  it('is order-independent and tells sets apart that SORTED tells apart', () => {
    const a: [string, string][] = [['route\0b', '2'], ['bind\0a', '1']];
    assert.equal(sumVersion(a), sumVersion([...a].reverse()));
    assert.notEqual(sumVersion(a), sumVersion([['route\0b', '3'], ['bind\0a', '1']]), 'another version');
    assert.notEqual(sumVersion(a), sumVersion([['route\0b', '2']]), 'a resource missing');
    assert.notEqual(sumVersion(a), sumVersion([['route\0c', '2'], ['bind\0a', '1']]), 'another name');
    assert.notEqual(sumVersion(a), sortedVersion(a), 'the two schemes never share a version text');
  });

  it('the cache\'s running SUM equals the SUM of what it holds after every step of a random delta sequence', () => {
    let seed = 7;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const cache = new ResourceCache();
    const held = new Map<string, string>();
    for (let step = 0; step < 200; step++) {
      const added: Resource[] = [];
      const removed: { kind: ResourceKind; name: string }[] = [];
      for (let k = random(4); k >= 0; k--) {
        const kind = (['bind', 'route', 'backend'] as const)[random(3)] as ResourceKind;
        const name = `n${random(12)}`;
        // Removals, changes, re-adds and a name removed and added in one delta all occur.
        if (random(3) === 0) removed.push({ kind, name });
        else added.push(resource(kind, name, random(5)));
      }
      const delta: Delta = { added, removed };
      const next = cache.preview(delta);
      const version = cache.sumVersion(next, delta);
      for (const { kind, name } of removed) held.delete(resourceId(kind, name));
      for (const r of added) held.set(resourceId(r.kind, r.name), r.version);
      assert.equal(version, sumVersion(held), `step ${step}`);
      // Most steps commit what sumVersion() summed; some commit without asking (a SORTED controller).
      if (random(4) === 0) cache.commit(cache.preview({ added: [], removed: [] }));
      cache.commit(next);
      assert.deepEqual(cache.versions(), held);
    }
  });
});
