import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SourcedObject } from '../../api/gateway/object.ts';
import { ObjectStore, objectKey } from './store.ts';

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
