import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deltaFrom, patchConfig, patchRecord, recordSize } from './config-delta.ts';
import type { ProxyConfig } from './types.ts';

describe('patchRecord', () => {
  const a = { n: 1 };
  const b = { n: 2 };
  const c = { n: 3 };
  const rows: { name: string; previous: Record<string, object>; set: Record<string, object>; removed: string[]; keys: string[] }[] = [
    { name: 'a changed entry keeps the order', previous: { x: a, y: b }, set: { x: c }, removed: [], keys: ['x', 'y'] },
    { name: 'an added entry is placed in key order', previous: { b: a, d: b }, set: { c }, removed: [], keys: ['b', 'c', 'd'] },
    { name: 'a removed entry goes', previous: { b: a, d: b }, set: {}, removed: ['b'], keys: ['d'] },
    { name: 'removing a key that is not there changes nothing', previous: { b: a }, set: {}, removed: ['zz'], keys: ['b'] },
  ];
  it('an empty patch (or one removing keys that are not there) gives the same record', () => {
    const previous = { b: a, d: b };
    assert.equal(patchRecord(previous, { set: {}, removed: [] }), previous);
    assert.equal(patchRecord(previous, { set: {}, removed: ['zz'] }), previous);
    assert.notEqual(patchRecord(previous, { set: { b: a }, removed: [] }), previous, 'a set entry makes a new record, even the same object');
  });

  for (const row of rows) {
    it(row.name, () => {
      const out = patchRecord(row.previous, { set: row.set, removed: row.removed });
      assert.deepEqual(Object.keys(out), row.keys);
      for (const key of row.keys) assert.equal(out[key], Object.hasOwn(row.set, key) ? row.set[key] : row.previous[key], `${key} is the same object`);
      // The kept key list is used again for the next patch: it must still be right.
      const again = patchRecord(out, { set: {}, removed: [] });
      assert.deepEqual(Object.keys(again), row.keys);
    });
  }
});

describe('patchConfig', () => {
  const previous: ProxyConfig = { version: 'v1', binds: [], routes: {}, backends: {} };
  it('records its delta for the config it was made from only', () => {
    const next = patchConfig(previous, 'v2', [], { set: {}, removed: ['gone'] }, { set: {}, removed: [] });
    assert.deepEqual(deltaFrom(next, previous)?.routesRemoved, [], 'a key that was not there was not removed');
    assert.equal(deltaFrom(next, { ...previous }), undefined);
    assert.equal(deltaFrom({ ...next }, previous), undefined);
  });
});

describe('recordSize', () => {
  it('counts a patched record (from its kept keys) and any other record', () => {
    const previous: Record<string, object> = { a: {}, b: {} };
    assert.equal(recordSize(previous), 2);
    assert.equal(recordSize(patchRecord(previous, { set: { c: {} }, removed: ['a'] })), 2);
    assert.equal(recordSize(patchRecord(previous, { set: { c: {} }, removed: [] })), 3);
  });
});

describe('patched configs do not keep the ones they were patched from', () => {
  it('an earlier config of a chain is collected while the latest lives', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // Made in a function of its own: nothing here refers to the first config afterwards.
    const { collected, latest } = (() => {
      const first: ProxyConfig = { version: 'v0', binds: [], routes: { 'default/a': { key: 'default/a', namespace: 'default', name: 'a', creationTimestamp: '', rules: [] } }, backends: {} };
      let next = first;
      for (let i = 1; i < 4; i++) next = patchConfig(next, `v${i}`, [], { set: {}, removed: [] }, { set: {}, removed: [] });
      return { collected: new WeakRef(first), latest: next };
    })();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(collected.deref(), undefined);
    assert.equal(latest.version, 'v3');
  });
});
