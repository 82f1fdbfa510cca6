import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deltaFrom } from '../../ir/config-delta.ts';
import type { ProxyConfig } from '../../ir/types.ts';
import { assembleConfig, patchAssembledConfig, ResourceCache } from './assemble.ts';
import { resourceId, type Delta, type Resource, type ResourceKind } from './split.ts';

const resource = (kind: ResourceKind, name: string, body: object): Resource => ({ kind, name, version: JSON.stringify(body), json: JSON.stringify(body) });
const bind = (key: string, port: number, tag = 0): Resource => resource('bind', key, { key, port, tag, listeners: [] });
const route = (key: string, tag = 0): Resource => resource('route', key, { key, tag, rules: [] });
const backend = (key: string, tag = 0): Resource => resource('backend', key, { key, tag });

/** Applies `delta` as the proxy client does: preview, then a patched config from the last one. */
function step(cache: ResourceCache, previous: ProxyConfig | undefined, delta: Delta, version: string): ProxyConfig {
  const next = cache.preview(delta);
  const config = previous ? patchAssembledConfig(previous, next, delta, version) : assembleConfig(next, version);
  assert.deepEqual(config, assembleConfig(next, version), `${version}: the patched config is the assembled one`);
  cache.commit(next);
  return config;
}

describe('patchAssembledConfig: the proxy builds each config from the last good one', () => {
  const rows: { name: string; delta: Delta; check: (config: ProxyConfig, previous: ProxyConfig) => void }[] = [
    {
      name: 'one route changed: the only new entry, every other route and the binds kept',
      delta: { added: [route('r2', 1)], removed: [] },
      check: (config, previous) => {
        assert.notEqual(config.routes.r2, previous.routes.r2);
        assert.equal(config.routes.r1, previous.routes.r1);
        assert.equal(config.backends.b1, previous.backends.b1);
        assert.deepEqual(config.binds, previous.binds);
        assert.ok(config.binds.every((b, i) => b === previous.binds[i]));
        assert.deepEqual(deltaFrom(config, previous)?.routesSet, ['r2']);
      },
    },
    {
      name: 'a route removed and a backend added',
      delta: { added: [backend('b9')], removed: [{ kind: 'route', name: 'r1' }] },
      check: (config, previous) => {
        assert.equal(config.routes.r1, undefined);
        assert.deepEqual(deltaFrom(config, previous)?.routesRemoved, ['r1']);
        assert.deepEqual(deltaFrom(config, previous)?.backendsSet, ['b9']);
      },
    },
    {
      name: 'removed and added again in one delta: set, not removed',
      delta: { added: [route('r3', 7)], removed: [{ kind: 'route', name: 'r3' }] },
      check: (config, previous) => {
        assert.equal((config.routes.r3 as unknown as { tag: number }).tag, 7);
        assert.deepEqual(deltaFrom(config, previous)?.routesRemoved, []);
      },
    },
    {
      name: 'a bind changed: the binds are rebuilt in port order',
      delta: { added: [bind('a', 9000, 1), bind('c', 7000)], removed: [{ kind: 'bind', name: 'b' }] },
      check: (config) => assert.deepEqual(config.binds.map((b) => b.key), ['c', 'a']),
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const cache = new ResourceCache();
      const first = step(cache, undefined, { added: [bind('a', 8080), bind('b', 8081), route('r1'), route('r2'), route('r3'), backend('b1')], removed: [] }, 'v1');
      row.check(step(cache, first, row.delta, 'v2'), first);
    });
  }

  it('a random sequence of deltas: every patched config equals the assembled one', () => {
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const cache = new ResourceCache();
    let config = step(cache, undefined, { added: [bind('a', 8080), route('r0'), backend('b0')], removed: [] }, 'v0');
    for (let v = 1; v <= 200; v++) {
      const added: Resource[] = [];
      const removed: { kind: ResourceKind; name: string }[] = [];
      for (let i = next(4); i > 0; i--) {
        const kind = (['bind', 'route', 'route', 'backend'] as const)[next(4)] as ResourceKind;
        const name = `${kind[0]}${next(12)}`;
        if (next(3) === 0) removed.push({ kind, name });
        else added.push(kind === 'bind' ? bind(name, 8000 + next(5), v) : kind === 'route' ? route(name, v) : backend(name, v));
      }
      config = step(cache, config, { added, removed }, `v${v}`);
    }
  });
});

describe('ResourceCache: what a proxy holds per resource', () => {
  it('the parsed value and its version, not a second copy of its JSON text (issue 15: 10k routes)', () => {
    const cache = new ResourceCache();
    const sent = route('r1', 3);
    cache.commit(cache.preview({ added: [sent], removed: [] }));
    assert.deepEqual(cache.held(), [{ kind: 'route', name: 'r1', version: sent.version }]);
    assert.deepEqual(cache.versions(), new Map([[resourceId('route', 'r1'), sent.version]]));
  });
});
