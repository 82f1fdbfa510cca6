import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Backend, Bind, Listener, ProxyConfig, Route } from '../../ir/types.ts';
import { validateConfig } from '../../ir/validate.ts';
import { assembleConfig, ResourceCache } from './assemble.ts';
import { patchConfig } from '../../ir/config-delta.ts';
import { diffSlice, redactionsFor, resourceId, reuseSlice, secretValuesOf, sliceForGateways, sliceVersion, versionsOf, type GatewayRef } from './split.ts';
import { sumVersion, SystemVersionScheme } from './version.ts';

const listener = (ns: string, gw: string, routes: string[], extra: Partial<Listener> = {}): Listener => ({
  key: `${ns}/${gw}/http`, gateway: { namespace: ns, name: gw }, sectionName: 'http', hostname: null, protocol: 'HTTP',
  routes: routes.map((routeKey) => ({ routeKey, hostnames: [] })), ...extra,
});

const backend = (key: string, extra: Partial<Backend> = {}): Backend => {
  const [, ns = '', name = ''] = /^backend\/([^/]+)\/(.+)$/.exec(key) ?? [];
  return { key, kind: 'ProxyBackend', namespace: ns, name, endpoints: [{ host: '127.0.0.1', port: 9 }], rewriteHost: false, ...extra };
};

const route = (key: string, backendKey: string, extra: Partial<Route['rules'][number]> = {}): Route => {
  const [namespace = '', name = ''] = key.split('/');
  return {
    key, namespace, name, creationTimestamp: '2026-01-01T00:00:00Z',
    rules: [{ key: `${key}/rule/0`, matches: [], filters: [], backends: [{ backendKey, weight: 1, filters: [] }], ...extra }],
  };
};

/**
 * Gateways a/one and a/two and c/other share port 80; a/two also has port 81. Route a/r1 is on
 * a/one and c/other with per-listener policies; the extAuth service of a/one's frontend policy,
 * and an AI backend whose provider policy names another backend, must follow.
 */
function fixture(): ProxyConfig {
  const bind80: Bind = {
    key: 'bind/80', port: 80, protocol: 'HTTP',
    listeners: [listener('a', 'one', ['a/r1']), listener('a', 'two', ['a/r2']), listener('c', 'other', ['a/r1', 'c/secret'])],
    frontend: { tracing: { backendKey: 'backend/a/authz' } } as never,
  };
  const bind81: Bind = { key: 'bind/81', port: 81, protocol: 'HTTP', listeners: [{ ...listener('a', 'two', ['a/r3']), key: 'a/two/alt', sectionName: 'alt' }] };
  return {
    version: 'v1',
    binds: [bind80, bind81],
    routes: {
      'a/r1': route('a/r1', 'backend/a/ai', {
        trafficByListener: { 'a/one/http': { timeouts: {} } as never, 'c/other/http': { apiKeyAuthentication: { keys: [{ id: 'c/keys/k', keyHash: 'c-secret-hash' }] } } as never },
      }),
      'a/r2': route('a/r2', 'backend/a/two'),
      'a/r3': route('a/r3', 'backend/a/two'),
      'c/secret': route('c/secret', 'backend/c/secret'),
    },
    backends: {
      'backend/a/ai': backend('backend/a/ai', { ai: { key: 'backend/a/ai', groups: [{ providers: [{ name: 'p', policies: { extAuth: { backendKey: 'backend/a/provider-authz' } } }] }] } as never }),
      'backend/a/provider-authz': backend('backend/a/provider-authz'),
      'backend/a/authz': backend('backend/a/authz'),
      'backend/a/two': backend('backend/a/two'),
      'backend/c/secret': backend('backend/c/secret'),
      'backend/a/unused': backend('backend/a/unused'),
    },
  };
}

const names = (config: ProxyConfig, gateways: GatewayRef[]): string[] => [...sliceForGateways(config, gateways).resources.keys()].map((id) => id.replace('\u0000', ':')).sort();

function assembled(config: ProxyConfig, gateways: GatewayRef[]): ProxyConfig {
  const slice = sliceForGateways(config, gateways);
  const cache = new ResourceCache();
  return assembleConfig(cache.preview(diffSlice(slice.resources, new Map())), slice.version);
}

describe('sliceForGateways', () => {
  const cases: { name: string; gateways: GatewayRef[]; expected: string[] }[] = [
    {
      name: 'a/one: its bind, its route, the route\'s AI backend, the provider\'s and the frontend\'s extAuth services',
      gateways: [{ namespace: 'a', name: 'one' }],
      expected: ['backend:backend/a/ai', 'backend:backend/a/authz', 'backend:backend/a/provider-authz', 'bind:bind/80', 'route:a/r1'],
    },
    {
      name: 'a/two: both of its binds and the backends they reach',
      gateways: [{ namespace: 'a', name: 'two' }],
      expected: ['backend:backend/a/authz', 'backend:backend/a/two', 'bind:bind/80', 'bind:bind/81', 'route:a/r2', 'route:a/r3'],
    },
    {
      name: 'a gateway nobody listens for gets nothing',
      gateways: [{ namespace: 'a', name: 'missing' }],
      expected: [],
    },
    {
      name: 'the same name in another namespace is another gateway',
      gateways: [{ namespace: 'b', name: 'one' }],
      expected: [],
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(names(fixture(), c.gateways), c.expected));

  it('keeps only the served gateways\' listeners on a shared bind', () => {
    const config = assembled(fixture(), [{ namespace: 'a', name: 'one' }]);
    assert.deepEqual(config.binds.map((b) => b.listeners.map((l) => l.key)), [['a/one/http']]);
  });

  it('prunes a route\'s per-listener policies to served listeners: another gateway\'s policy (and its secrets) stays behind', () => {
    const config = assembled(fixture(), [{ namespace: 'a', name: 'one' }]);
    assert.deepEqual(Object.keys(config.routes['a/r1']?.rules[0]?.trafficByListener ?? {}), ['a/one/http']);
    assert.doesNotMatch(JSON.stringify(config), /c-secret-hash|backend\/c\/secret/);
  });

  it('makes a config the IR validator accepts, for every gateway', () => {
    const full = fixture();
    for (const name of ['one', 'two']) assert.deepEqual(validateConfig(assembled(full, [{ namespace: 'a', name }])), [], name);
  });

  it('serves several gateways from one proxy', () => {
    const config = assembled(fixture(), [{ namespace: 'a', name: 'one' }, { namespace: 'a', name: 'two' }]);
    assert.deepEqual(config.binds.map((b) => b.listeners.map((l) => l.key)), [['a/one/http', 'a/two/http'], ['a/two/alt']]);
  });

  it('versions are content hashes: an unrelated change leaves the slice version alone, a related one moves it', () => {
    const base = fixture();
    const one = [{ namespace: 'a', name: 'one' }];
    const before = sliceForGateways(base, one).version;
    const unrelated = { ...base, backends: { ...base.backends, 'backend/a/two': backend('backend/a/two', { endpoints: [{ host: '10.0.0.1', port: 80 }] }) } };
    assert.equal(sliceForGateways(unrelated, one).version, before);
    const related = { ...base, backends: { ...base.backends, 'backend/a/authz': backend('backend/a/authz', { endpoints: [{ host: '10.0.0.2', port: 80 }] }) } };
    assert.notEqual(sliceForGateways(related, one).version, before);
  });

  it('a route cut for one gateway set, then another, then the first again, is pruned for each (the pruning is remembered per set)', () => {
    const config = fixture();
    const routeJson = (gateway: GatewayRef) => sliceForGateways(config, [gateway]).resources.get(resourceId('route', 'a/r1'))?.json ?? '';
    const one = { namespace: 'a', name: 'one' };
    const other = { namespace: 'c', name: 'other' };
    const first = routeJson(one);
    assert.doesNotMatch(first, /c-secret-hash/);
    assert.match(routeJson(other), /c-secret-hash/);
    assert.doesNotMatch(routeJson(other), /a\/one\/http/);
    const again = routeJson(one);
    assert.equal(again, first);
    assert.doesNotMatch(again, /c-secret-hash/);
  });
});

describe('diffSlice', () => {
  const one = [{ namespace: 'a', name: 'two' }];
  const cases: { name: string; change: (c: ProxyConfig) => ProxyConfig; added: string[]; removed: string[] }[] = [
    { name: 'nothing changed: empty delta', change: (c) => c, added: [], removed: [] },
    {
      name: 'a changed route only',
      change: (c) => ({ ...c, routes: { ...c.routes, 'a/r2': route('a/r2', 'backend/a/two', { timeouts: { requestMs: 5 } }) } }),
      added: ['a/r2'], removed: [],
    },
    {
      name: 'a detached route is removed, with the backend only it used',
      change: (c) => ({ ...c, binds: c.binds.filter((b) => b.port !== 81), routes: { ...c.routes } }),
      added: [], removed: ['bind/81', 'a/r3'].sort(),
    },
    {
      name: 'a new attachment adds the route and the backend it reaches',
      change: (c) => ({
        ...c,
        binds: c.binds.map((b) => (b.port === 81 ? { ...b, listeners: [{ ...b.listeners[0] as Listener, routes: [{ routeKey: 'a/r3', hostnames: [] }, { routeKey: 'a/new', hostnames: [] }] }] } : b)),
        routes: { ...c.routes, 'a/new': route('a/new', 'backend/a/unused') },
      }),
      added: ['a/new', 'backend/a/unused', 'bind/81'].sort(), removed: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const base = fixture();
      const held = versionsOf(sliceForGateways(base, one).resources);
      const delta = diffSlice(sliceForGateways(c.change(base), one).resources, held);
      assert.deepEqual(delta.added.map((r) => r.name).sort(), c.added);
      assert.deepEqual(delta.removed.map((r) => r.name).sort(), c.removed);
    });
  }

  it('applying the delta to what was held gives the new slice, with the same version', () => {
    const base = fixture();
    const next = { ...base, routes: { ...base.routes, 'a/r2': route('a/r2', 'backend/a/two', { timeouts: { requestMs: 5 } }) } };
    const cache = new ResourceCache();
    const first = diffSlice(sliceForGateways(base, one).resources, new Map());
    const held = cache.preview(first);
    cache.sumVersion(held, first);
    cache.commit(held);
    const target = sliceForGateways(next, one);
    const delta = diffSlice(target.resources, cache.versions());
    const after = cache.preview(delta);
    // Both schemes: the proxy's running SUM and the SORTED version of what it holds.
    assert.equal(cache.sumVersion(after, delta), target.version);
    assert.equal(target.versionIn(SystemVersionScheme.SUM), target.version);
    cache.commit(after);
    assert.equal(sliceVersion(cache.versions()), target.versionIn(SystemVersionScheme.SORTED));
    assert.equal(sumVersion(cache.versions()), target.version);
    assert.deepEqual(cache.versions(), versionsOf(target.resources));
    assert.ok(cache.versions().has(resourceId('route', 'a/r2')));
  });
});

describe('redactionsFor', () => {
  it('sends a proxy only the secret values its resources hold, matched as they appear in JSON', () => {
    const config = fixture();
    const values = ['c-secret-hash', 'line1\nline2', 'backend/a/authz'];
    const withPem = { ...config, backends: { ...config.backends, 'backend/a/two': backend('backend/a/two', { appProtocol: 'line1\nline2' }) } };
    assert.deepEqual(redactionsFor(sliceForGateways(withPem, [{ namespace: 'a', name: 'two' }]).resources, values), ['line1\nline2', 'backend/a/authz']);
    assert.deepEqual(redactionsFor(sliceForGateways(withPem, [{ namespace: 'c', name: 'other' }]).resources, values), ['c-secret-hash', 'backend/a/authz']);
  });

  it('a cut given SecretValues finds the same, remembered per value and list: a new list is looked for again', () => {
    const config = fixture();
    const two = [{ namespace: 'a', name: 'two' }];
    const other = [{ namespace: 'c', name: 'other' }];
    const first = secretValuesOf(['c-secret-hash', 'backend/a/authz']);
    assert.equal(secretValuesOf(['c-secret-hash', 'backend/a/authz'], first), first, 'the same list: the same object');
    for (const gateways of [two, other, two]) {
      const slice = sliceForGateways(config, gateways, first);
      assert.deepEqual(slice.redactions, redactionsFor(slice.resources, first.values));
    }
    // The same IR objects, another list: a value only the new list has is found in them.
    const second = secretValuesOf(['a/r2/rule/0', 'c-secret-hash'], first);
    assert.notEqual(second, first);
    assert.deepEqual(sliceForGateways(config, two, second).redactions, ['a/r2/rule/0']);
    assert.deepEqual(sliceForGateways(config, two).redactions, [], 'no SecretValues: nothing looked for');
  });
});

describe('sliceForGateways: a backendKey inside free-form JSON is data, not a reference', () => {
  /** Route a/r2 (on a/two) carries policies whose free-form fields name c's backend, as a hostile author in `a` could write them. */
  function hostile(): ProxyConfig {
    const config = fixture();
    const claims = { sub: 'svc', backendKey: 'backend/c/secret', nested: [{ backendKey: 'backend/c/secret' }] };
    const r2 = route('a/r2', 'backend/a/two', {
      traffic: { transformation: { request: { body: '{"backendKey":"backend/c/secret"}' } }, metadata: { backendKey: 'backend/c/secret' } } as never,
    });
    const rule = r2.rules[0] as Route['rules'][number];
    const withClaims: Route = { ...r2, rules: [{ ...rule, backends: [{ backendKey: 'backend/a/two', weight: 1, filters: [], backendPolicy: { auth: { jwtSign: { signingKey: 'pem', claims } }, sources: {} } as never }] }] };
    return { ...config, routes: { ...config.routes, 'a/r2': withClaims } };
  }

  it('the other namespace\'s backend is not sent to the proxy of a/two', () => {
    const got = names(hostile(), [{ namespace: 'a', name: 'two' }]);
    assert.ok(got.includes('backend:backend/a/two'), got.join(', '));
    assert.ok(!got.includes('backend:backend/c/secret'), `c's backend leaked into a/two's slice: ${got.join(', ')}`);
  });

  it('validateConfig does not read the claim as a reference either', () => {
    const config = hostile();
    const { 'backend/c/secret': _dropped, ...backends } = config.backends;
    const routes = Object.fromEntries(Object.entries(config.routes).filter(([key]) => key !== 'c/secret'));
    const binds = config.binds.map((b) => ({ ...b, listeners: b.listeners.map((l) => ({ ...l, routes: l.routes.filter((r) => r.routeKey !== 'c/secret') })) }));
    assert.deepEqual(validateConfig({ ...config, binds, routes, backends }), []);
  });
});

describe('reuseSlice: a slice the change does not concern is kept, in O(binds + change)', () => {
  const two = [{ namespace: 'a', name: 'two' }];
  const other = [{ namespace: 'c', name: 'other' }];
  type Change = (base: ProxyConfig) => ProxyConfig;
  const patched = (base: ProxyConfig, routes: Record<string, Route>, backends: Record<string, Backend> = {}, binds: Bind[] = [...base.binds], removedRoutes: string[] = []): ProxyConfig =>
    patchConfig(base, 'v2', binds, { set: routes, removed: removedRoutes }, { set: backends, removed: [] });
  const rows: { name: string; gateways: GatewayRef[]; change: Change; base?: (c: ProxyConfig) => ProxyConfig; reused: boolean }[] = [
    { name: 'a route only another gateway serves changed', gateways: two, change: (b) => patched(b, { 'c/secret': route('c/secret', 'backend/c/secret', { timeouts: { requestMs: 1 } }) }), reused: true },
    { name: 'a route of the slice changed', gateways: two, change: (b) => patched(b, { 'a/r2': route('a/r2', 'backend/a/two', { timeouts: { requestMs: 1 } }) }), reused: false },
    { name: 'a route of the slice removed', gateways: two, change: (b) => patched(b, {}, {}, [...b.binds], ['a/r3']), reused: false },
    { name: 'a bind with none of its listeners changed', gateways: other, change: (b) => patched(b, {}, {}, [b.binds[0] as Bind, { ...(b.binds[1] as Bind), port: 82 }]), reused: true },
    { name: 'a bind with one of its listeners changed', gateways: two, change: (b) => patched(b, {}, {}, [b.binds[0] as Bind, { ...(b.binds[1] as Bind), port: 82 }]), reused: false },
    {
      name: 'a bind that loses the slice\'s listener (to another gateway)',
      gateways: two,
      change: (b) => patched(b, {}, {}, [b.binds[0] as Bind, { ...(b.binds[1] as Bind), listeners: [{ ...listener('c', 'other', []), key: 'c/other/alt' }] }]),
      reused: false,
    },
    { name: 'a backend the slice holds changed', gateways: two, change: (b) => patched(b, {}, { 'backend/a/two': backend('backend/a/two', { endpoints: [{ host: '10.0.0.9', port: 1 }] }) }), reused: false },
    { name: 'a backend of another slice changed', gateways: two, change: (b) => patched(b, {}, { 'backend/c/secret': backend('backend/c/secret', { endpoints: [{ host: '10.0.0.9', port: 1 }] }) }), reused: true },
    {
      name: 'a route the slice\'s listener attaches, missing before, added',
      gateways: two,
      base: (c) => ({ ...c, routes: Object.fromEntries(Object.entries(c.routes).filter(([k]) => k !== 'a/r3')) }),
      change: (b) => patched(b, { 'a/r3': route('a/r3', 'backend/a/two') }),
      reused: false,
    },
    { name: 'a config not patched from the one cut (no delta known)', gateways: other, change: (b) => ({ ...b, version: 'v2' }), reused: false },
  ];
  for (const row of rows) {
    it(`${row.reused ? 'keeps' : 'cuts again'}: ${row.name}`, () => {
      const base = (row.base ?? ((c) => c))(fixture());
      const previous = sliceForGateways(base, row.gateways);
      const next = row.change(base);
      const reused = reuseSlice(previous, next);
      assert.equal(reused !== undefined, row.reused);
      if (!reused) return;
      assert.equal(reused.resources, previous.resources);
      // Kept only when a full cut would give the same: equal resources, equal version.
      const full = sliceForGateways(next, row.gateways);
      assert.equal(reused.version, full.version);
      assert.deepEqual(versionsOf(reused.resources), versionsOf(full.resources));
      // A reused slice is reused again against the config after it.
      assert.ok(reuseSlice(reused, patched(next, {})));
    });
  }

  it('cuts again for another list of secret values (the redactions may differ)', () => {
    const base = fixture();
    const first = secretValuesOf(['c-secret-hash']);
    const previous = sliceForGateways(base, other, first);
    const next = patched(base, {});
    assert.ok(reuseSlice(previous, next, first));
    assert.equal(reuseSlice(previous, next, secretValuesOf(['backend/a/authz'], first)), undefined);
  });
});
