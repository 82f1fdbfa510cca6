import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SourcedObject } from '../../api/gateway/object.ts';
import { dedupe, IncrementalDedupe, ObjectStore, objectKey } from './store.ts';

const sourced = (kind: string, name: string, file: string, namespace?: string, line = 1): SourcedObject => ({
  object: { apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) }, spec: { from: file } },
  origin: { file, document: 0, line },
});

describe('ObjectStore', () => {
  it('keys objects without a namespace into default, cluster-scoped kinds by name only', () => {
    assert.equal(objectKey(sourced('Service', 's', 'a').object), 'Service/default/s');
    assert.equal(objectKey(sourced('GatewayClass', 'c', 'a', 'ignored').object), 'GatewayClass//c');
  });

  it('keeps the first of two declarations of one object and names both files in the error', () => {
    const store = new ObjectStore();
    const duplicates = store.replace({
      objects: [sourced('Service', 's', 'a.yaml', undefined, 3), sourced('Service', 'other', 'a.yaml'), sourced('Service', 's', 'b.yaml', 'default', 7)],
      problems: [],
    });
    assert.deepEqual(store.objects().map((o) => [o.metadata.name, (o.spec as { from: string }).from]), [['s', 'a.yaml'], ['other', 'a.yaml']]);
    assert.equal(duplicates.length, 1);
    assert.equal(duplicates[0].file, 'b.yaml');
    assert.equal(duplicates[0].line, 7);
    assert.match(duplicates[0].message, /a\.yaml:3/);
    assert.match(duplicates[0].message, /b\.yaml:7/);
    assert.deepEqual(store.problems(), duplicates);
  });

  it('treats the same name in different namespaces or kinds as different objects', () => {
    const store = new ObjectStore();
    const duplicates = store.replace({ objects: [sourced('Service', 's', 'a', 'x'), sourced('Service', 's', 'a', 'y'), sourced('Secret', 's', 'a', 'x')], problems: [] });
    assert.deepEqual(duplicates, []);
    assert.equal(store.objects().length, 3);
  });

  it('carries the source problems and finds origins', () => {
    const store = new ObjectStore();
    store.replace({ objects: [sourced('Service', 's', 'a.yaml', 'ns', 4)], problems: [{ severity: 'error', file: 'z.yaml', message: 'boom' }] });
    assert.deepEqual(store.problems().map((p) => p.message), ['boom']);
    assert.deepEqual(store.originOf('Service', 's', 'ns'), { file: 'a.yaml', document: 0, line: 4 });
    assert.equal(store.originOf('Service', 's'), undefined);
  });
});

describe('IncrementalDedupe: each snapshot dedupes as dedupe() would', () => {
  const base = [sourced('Service', 'a', 'f1'), sourced('Service', 'b', 'f1'), sourced('HTTPRoute', 'r', 'f2', 'team'), sourced('Service', 'c', 'f2')];
  const rows: { name: string; next: (prev: SourcedObject[]) => SourcedObject[] }[] = [
    { name: 'unchanged objects (a re-read keeps them as the same objects)', next: (prev) => prev.slice() },
    { name: 'one object edited in its place', next: (prev) => prev.map((s, i) => (i === 1 ? sourced('Service', 'b', 'f1-edited') : s)) },
    { name: 'an object renamed in its place to a new name', next: (prev) => prev.map((s, i) => (i === 1 ? sourced('Service', 'd', 'f1') : s)) },
    { name: 'an object renamed in its place to a name another declares (a duplicate)', next: (prev) => prev.map((s, i) => (i === 1 ? sourced('Service', 'c', 'f1') : s)) },
    { name: 'two objects swap places (keys move)', next: (prev) => [prev[1], prev[0], prev[2], prev[3]] as SourcedObject[] },
    { name: 'an object added', next: (prev) => [...prev, sourced('Service', 'a', 'f3')] },
    { name: 'an object removed', next: (prev) => prev.slice(1) },
    { name: 'a duplicate removed again', next: () => base.slice() },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const incremental = new IncrementalDedupe();
      const clean = base.slice();
      // A start with a duplicate, then clean snapshots, then the row's change: every step as dedupe().
      for (const snapshot of [[...base, sourced('Service', 'a', 'dup')], base.slice(), clean, row.next(clean)]) {
        const got = incremental.dedupe(snapshot);
        const want = dedupe(snapshot);
        assert.deepEqual(got.objects, want.objects);
        assert.deepEqual(got.duplicates, want.duplicates);
      }
    });
  }

  it('a sequence of random edits: every step equals dedupe()', () => {
    let seed = 11;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const incremental = new IncrementalDedupe();
    let snapshot = Array.from({ length: 12 }, (_, i) => sourced('Service', `s${i}`, 'f'));
    for (let step = 0; step < 300; step++) {
      const copy = snapshot.slice();
      const at = next(copy.length);
      const op = next(4);
      if (op === 0) copy[at] = sourced('Service', `s${next(16)}`, `edit${step}`);
      else if (op === 1) copy.splice(at, 1);
      else if (op === 2) copy.splice(at, 0, sourced('Service', `s${next(16)}`, `add${step}`));
      else copy[at] = sourced('Service', (copy[at] as SourcedObject).object.metadata.name, `same-name${step}`);
      snapshot = copy;
      const got = incremental.dedupe(snapshot);
      const want = dedupe(snapshot);
      assert.deepEqual(got.objects, want.objects, `step ${step}`);
      assert.deepEqual(got.duplicates, want.duplicates, `step ${step}`);
    }
  });
});
