import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Backend, Route } from '../../ir/types.ts';
import { configVersion, entryDigest, VersionParts, type ConfigBody } from './version.ts';

/** A body with routes and backends as small objects (the version reads only their canonical JSON). */
function body(routes: ReadonlyMap<string, number>, backends: ReadonlyMap<string, number> = new Map(), binds: unknown[] = []): ConfigBody {
  const record = <T>(entries: ReadonlyMap<string, number>): Record<string, T> => Object.fromEntries([...entries].map(([key, n]) => [key, { key, n } as T]));
  return { binds: binds as ConfigBody['binds'], routes: record<Route>(routes), backends: record<Backend>(backends) };
}

/** Object.fromEntries of the same entries in another order. */
const reordered = <T>(record: Record<string, T>, order: (keys: string[]) => string[]): Record<string, T> => Object.fromEntries(order(Object.keys(record)).map((k) => [k, record[k] as T]));

const KEYS = fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 0, maxLength: 600 });

describe('configVersion', () => {
  it('is the same for the same entries in any key order (property)', () => {
    fc.assert(fc.property(KEYS, fc.integer(), (keys, seed) => {
      const b = body(new Map(keys.map((k, i) => [k, i])));
      const shuffle = (ks: string[]): string[] => ks.map((k, i) => [k, (i * 7919 + seed) % 1009] as const).sort((x, y) => x[1] - y[1]).map(([k]) => k);
      assert.equal(configVersion({ ...b, routes: reordered(b.routes, shuffle) }), configVersion(b));
    }), { numRuns: 100 });
  });

  it('changes when any entry, key, label or the binds change', () => {
    const routes = new Map(Array.from({ length: 1000 }, (_, i) => [`ns/r${i}`, i] as const));
    const base = configVersion(body(routes));
    assert.notEqual(configVersion(body(new Map([...routes, ['ns/r500', -1]]))), base, 'an entry');
    assert.notEqual(configVersion(body(new Map([...routes].filter(([k]) => k !== 'ns/r7')))), base, 'an entry removed');
    assert.notEqual(configVersion(body(routes, new Map()), entryDigest), configVersion(body(routes, new Map([['b', 1]]))), 'a backend');
    assert.notEqual(configVersion(body(new Map([['x', 1]]))), configVersion(body(new Map(), new Map([['x', 1]]))), 'a route is not a backend');
    assert.notEqual(configVersion(body(routes, new Map(), [{ port: 80 }])), base, 'the binds');
  });
});

describe('VersionParts (the incremental version)', () => {
  it('after any sequence of sets and removals equals configVersion() of the resulting body (property)', () => {
    // Keys from a small alphabet so that edits hit existing keys and buckets hold several.
    const key = fc.integer({ min: 0, max: 700 }).map((n) => `ns/r${n}`);
    const step = fc.record({ set: fc.array(fc.tuple(key, fc.integer({ min: 0, max: 3 })), { maxLength: 6 }), removed: fc.array(key, { maxLength: 4 }), backend: fc.option(fc.tuple(key, fc.integer({ min: 0, max: 3 }))) });
    fc.assert(fc.property(fc.array(fc.tuple(key, fc.integer()), { maxLength: 800 }), fc.array(step, { minLength: 1, maxLength: 15 }), (initial, steps) => {
      const routes = new Map(initial);
      const backends = new Map<string, number>();
      const parts = new VersionParts();
      const digests = new WeakMap<object, string>();
      const digestOf = (entry: object): string => { let d = digests.get(entry); if (d === undefined) digests.set(entry, (d = entryDigest(entry))); return d; };
      let previous = body(routes, backends);
      assert.equal(parts.version(previous, digestOf, undefined), configVersion(previous));
      for (const { set, removed, backend } of steps) {
        for (const [k, n] of set) routes.set(k, n);
        for (const k of removed) routes.delete(k);
        if (backend) backends.set(backend[0], backend[1]);
        const next = body(routes, backends);
        // What changed, as the translator reports it: entries whose content moved, keys dropped.
        const changes = (was: Record<string, object>, now: Record<string, object>): { set: Record<string, object>; removed: string[] } => ({
          set: Object.fromEntries(Object.entries(now).filter(([k, v]) => !Object.hasOwn(was, k) || JSON.stringify(was[k]) !== JSON.stringify(v))),
          removed: Object.keys(was).filter((k) => !Object.hasOwn(now, k)),
        });
        assert.equal(parts.version(next, digestOf, { routes: changes(previous.routes, next.routes), backends: changes(previous.backends, next.backends) }), configVersion(next));
        previous = next;
      }
    }), { numRuns: 60 });
  });
});
