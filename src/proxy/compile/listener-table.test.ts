import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { TrafficPolicy } from '../../ir/policy.ts';
import type { Bind, ProxyConfig, Route } from '../../ir/types.ts';
import { silentLogger } from '../../common/logger.ts';
import { UpstreamPools } from '../policies/backend/pools.ts';
import type { RequestView } from '../routing/matchers.ts';
import { backend, bind, config, listener, route, rule } from '../testing/config.ts';
import { compileConfig, compileConfigJob, type CompileContext, type CompiledConfig } from './config.ts';
import { reuseMemoFor } from './reuse.ts';
import { deltaFrom, patchConfig } from '../../ir/config-delta.ts';
import { SecureContextCache } from './tls-contexts.ts';

const request = (path: string): RequestView => ({ path, query: '', method: 'GET', headers: {} });
const table = (compiled: CompiledConfig, bindIndex: number) => compiled.binds[bindIndex]?.listeners.lookup('example.com')?.routes;

function prefixRoute(name: string, path: string, traffic?: TrafficPolicy): Route {
  return route(`default/${name}`, [rule(`default/${name}/rule/0`, {
    matches: [{ path: { type: path.startsWith('~') ? 'RegularExpression' : 'PathPrefix', value: path.replace(/^~/, '') } }],
    backends: [{ backendKey: 'svc', weight: 1, filters: [] }],
    ...(traffic ? { traffic } : {}),
  })]);
}

// One Backend object for every version: a rule reading a new Backend object is compiled again (reuse.ts).
const svc = backend('svc', [8080]);
const ir = (binds: readonly Bind[], routes: readonly Route[], version: string): ProxyConfig => config({ version, binds, routes, backends: [svc] });

describe('listener route tables reused across config versions', () => {
  const pools = new UpstreamPools();
  after(() => pools.close(100));
  const context = (): CompileContext => ({ pools, secureContexts: new SecureContextCache(), logger: silentLogger });

  it('a listener whose attachments, Routes and rules are the same objects keeps its table; the one with the edited route gets a new one', () => {
    const ctx = context();
    const [a, b] = [prefixRoute('a', '/a'), prefixRoute('b', '/b')];
    const binds = [bind(80, [listener('one', [a.key])]), bind(81, [listener('two', [b.key])])];
    const v1 = compileConfig(ir(binds, [a, b], 'v1'), ctx).compiled;
    const b2 = prefixRoute('b', '/b2');
    const v2 = compileConfig(ir(binds, [a, b2], 'v2'), ctx).compiled;
    assert.ok(table(v1, 0));
    assert.equal(table(v2, 0), table(v1, 0), 'the untouched listener keeps its table');
    assert.notEqual(table(v2, 1), table(v1, 1));
    assert.equal(table(v2, 1)?.match('example.com', request('/b2'))?.routeKey, 'default/b');
    assert.equal(table(v2, 1)?.match('example.com', request('/b/x')), undefined);
  });

  it('a bind that is a new object (equal content) builds its tables again', () => {
    const ctx = context();
    const a = prefixRoute('a', '/a');
    const v1 = compileConfig(ir([bind(80, [listener('one', [a.key])])], [a], 'v1'), ctx).compiled;
    const v2 = compileConfig(ir([structuredClone(bind(80, [listener('one', [a.key])]))], [a], 'v2'), ctx).compiled;
    assert.notEqual(table(v2, 0), table(v1, 0));
    assert.equal(table(v2, 0)?.match('example.com', request('/a'))?.routeKey, 'default/a');
  });

  it('a kept table reports its match errors again on every version', () => {
    const ctx = context();
    const [ok, bad] = [prefixRoute('ok', '/ok'), prefixRoute('bad', '~[')];
    const binds = [bind(80, [listener('one', [ok.key, bad.key])])];
    const first = compileConfig(ir(binds, [ok, bad], 'v1'), ctx);
    const second = compileConfig(ir(binds, [ok, bad], 'v2'), ctx);
    assert.equal(table(second.compiled, 0), table(first.compiled, 0));
    assert.equal(first.errors.length, 1);
    assert.match(first.errors[0] ?? '', /^default\/gw\/one: /);
    assert.deepEqual(second.errors, first.errors);
  });

  it('a changed Backend object under a kept listener: the rule reads the new backend', () => {
    const ctx = context();
    const a = prefixRoute('a', '/a');
    const binds = [bind(80, [listener('one', [a.key])])];
    const v1 = compileConfig(ir(binds, [a], 'v1'), ctx).compiled;
    const v2 = compileConfig(config({ version: 'v2', binds, routes: [a], backends: [backend('svc', [8081])] }), ctx).compiled;
    assert.notEqual(table(v2, 0), table(v1, 0));
    assert.equal(table(v2, 0)?.match('example.com', request('/a'))?.rule.backends.pick()?.backend?.endpoints.all()[0]?.port, 8081);
  });

  it('a kept rule that has since used the per-config resources makes its listener build a new table', () => {
    const ctx = context();
    const a = prefixRoute('a', '/a');
    const binds = [bind(80, [listener('one', [a.key])])];
    const v1 = compileConfig(ir(binds, [a], 'v1'), ctx).compiled;
    const kept = reuseMemoFor(ctx).rules.get(a.rules[0] as Route['rules'][number]);
    assert.ok(kept);
    kept.touched.value = true;
    const v2 = compileConfig(ir(binds, [a], 'v2'), ctx).compiled;
    assert.notEqual(table(v2, 0)?.match('example.com', request('/a'))?.rule, table(v1, 0)?.match('example.com', request('/a'))?.rule);
  });

  it('a kept rule\'s errors are reported once per version, also when two listeners share it and only one is rebuilt', () => {
    const ctx = context();
    const a = route('default/a', [rule('default/a/rule/0', { matches: [{ path: { type: 'PathPrefix', value: '/a' } }], backends: [{ backendKey: 'missing', weight: 1, filters: [] }] })]);
    const [b, b2] = [prefixRoute('b', '/b'), prefixRoute('b', '/b2')];
    const binds = [bind(80, [listener('one', [a.key])]), bind(81, [listener('two', [a.key, b.key])])];
    const first = compileConfig(ir(binds, [a, b], 'v1'), ctx);
    assert.deepEqual(first.errors, ['default/a/rule/0: backend missing is not in the config']);
    const second = compileConfig(ir(binds, [a, b], 'v2'), ctx);
    assert.equal(table(second.compiled, 0), table(first.compiled, 0));
    assert.deepEqual(second.errors, first.errors);
    const third = compileConfig(ir(binds, [a, b2], 'v3'), ctx);
    assert.equal(table(third.compiled, 0), table(first.compiled, 0));
    assert.notEqual(table(third.compiled, 1), table(first.compiled, 1));
    assert.deepEqual(third.errors, first.errors);
  });

  it('a rule compiled per version (per-config state) makes its listener build a new table', () => {
    const ctx = context();
    const a = prefixRoute('a', '/a', { retry: { attempts: 2 }, sources: { retry: ['ProxyPolicy/default/p'] } } as unknown as TrafficPolicy);
    const binds = [bind(80, [listener('one', [a.key])])];
    const v1 = compileConfig(ir(binds, [a], 'v1'), ctx).compiled;
    const v2 = compileConfig(ir(binds, [a], 'v2'), ctx).compiled;
    assert.notEqual(table(v2, 0), table(v1, 0));
    assert.notEqual(table(v2, 0)?.match('example.com', request('/a'))?.rule, table(v1, 0)?.match('example.com', request('/a'))?.rule);
  });

  it('an edit beside a rule compiled per version changes the table for those routes only, with this version\'s rule', () => {
    const ctx = context();
    const retry = { retry: { attempts: 2 }, sources: { retry: ['ProxyPolicy/default/p'] } } as unknown as TrafficPolicy;
    const [a, b, h] = [prefixRoute('a', '/a'), prefixRoute('b', '/b', retry), prefixRoute('h', '/h')];
    const routes = [{ routeKey: a.key, hostnames: [] }, { routeKey: b.key, hostnames: [] }, { routeKey: h.key, hostnames: ['h.example.com'] }];
    const binds = [bind(80, [listener('one', [], { routes })])];
    const v1 = compileConfig(ir(binds, [a, b, h], 'v1'), ctx).compiled;
    const a2 = prefixRoute('a', '/a2');
    const v2 = compileConfig(ir(binds, [a2, b, h], 'v2'), ctx).compiled;
    const [t1, t2] = [table(v1, 0), table(v2, 0)];
    assert.ok(t1 && t2);
    assert.equal(t2.buckets().get('h.example.com'), t1.buckets().get('h.example.com'), 'the list the edit is not on is kept');
    assert.equal(t2.match('example.com', request('/a2'))?.routeKey, 'default/a');
    assert.equal(t2.match('example.com', request('/a'))?.routeKey, undefined);
    assert.equal(t1.match('example.com', request('/a'))?.routeKey, 'default/a', 'the old version\'s table is unchanged');
    const [rule1, rule2] = [t1.match('example.com', request('/b'))?.rule, t2.match('example.com', request('/b'))?.rule];
    assert.ok(rule1 && rule2);
    assert.notEqual(rule2, rule1, 'the per-version rule is this version\'s compile');
  });

  for (const patched of [false, true]) {
  it(`a sequence of edits gives the tables a compile from scratch gives (seeded${patched ? ', configs patched from the one before' : ''})`, async () => {
    let seed = 7;
    // The high bits of an LCG (its low bits repeat with a short period).
    const random = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    const retry = { retry: { attempts: 2 }, sources: { retry: ['ProxyPolicy/default/p'] } } as unknown as TrafficPolicy;
    const hostsFor = ['a.example.com', '*.example.com'];
    const make = (i: number): Route => {
      const kind = random(4);
      const path = kind === 0 ? `~/r${i}/[0-9]+` : `/r${random(3)}${'/x'.repeat(random(3))}`;
      return route(`default/r${i}`, [rule(`default/r${i}/rule/0`, {
        matches: [{ path: { type: path.startsWith('~') ? 'RegularExpression' : random(2) === 0 ? 'Exact' : 'PathPrefix', value: path.replace(/^~/, '') } }],
        backends: [{ backendKey: random(2) === 0 ? 'svc' : 'svc2', weight: 1, filters: [] }],
        ...(kind === 1 ? { traffic: retry } : {}),
      })], { creationTimestamp: `2024-01-0${1 + random(3)}T00:00:00Z` });
    };
    const count = 24;
    // One attachment more than routes: default/r24 is unknown (reported every version).
    const attachments = Array.from({ length: count + 1 }, (_, i) => ({ routeKey: `default/r${i}`, hostnames: i % 5 === 0 ? hostsFor : [] }));
    const binds = [bind(80, [listener('one', [], { routes: attachments })])];
    let routes = Array.from({ length: count }, (_, i) => make(i));
    let rulesBefore = new Map<string, unknown>();
    let perVersion = 0;
    const ctx = context();
    // Each entry with the port its rule's backend dials: a rule must read this version's backends.
    const shape = (t: ReturnType<typeof table>) => [...(t?.buckets() ?? [])].map(([host, entries]) => [host, entries.map((e) => `${e.routeKey}#${e.ruleIndex}.${e.matchIndex}:${e.rule.backends.pick()?.backend?.endpoints.all()[0]?.port}`)] as const);
    let svc2 = backend('svc2', [9000]);
    let previous: ProxyConfig | undefined;
    let patchedVersions = 0;
    const changes = <T>(before: Readonly<Record<string, T>>, after: Readonly<Record<string, T>>) => ({
      set: Object.fromEntries(Object.entries(after).filter(([key, value]) => before[key] !== value)),
      removed: Object.keys(before).filter((key) => !Object.hasOwn(after, key)),
    });
    let backendChanges = 0;
    for (let version = 1; version <= 30; version++) {
      const edits = 1 + random(3);
      for (let e = 0; e < edits; e++) {
        const i = random(count);
        routes = routes.map((r, j) => (j === i ? make(i) : r));
      }
      // Now and then the second backend changes (an EndpointSlice edit): only the rules reading it may change.
      if (random(3) === 0) {
        svc2 = backend('svc2', [9000 + version]);
        backendChanges++;
      }
      const whole = config({ version: `v${version}`, binds, routes, backends: [svc, svc2] });
      // Patched: as the serving thread makes them (config-delta.ts), naming what changed, so the compile looks only there.
      const cfg = patched && previous ? patchConfig(previous, whole.version, [...binds], changes(previous.routes, whole.routes), changes(previous.backends, whole.backends)) : whole;
      if (previous && deltaFrom(cfg, previous)) patchedVersions++;
      previous = cfg;
      const kept = compileConfig(cfg, ctx);
      // Its own pools: a context with the same pools shares their memo (reuse.ts), and would not compile from scratch.
      const freshPools = new UpstreamPools();
      const fresh = compileConfig(cfg, { pools: freshPools, secureContexts: new SecureContextCache(), logger: silentLogger });
      await freshPools.close(0);
      assert.deepEqual(shape(table(kept.compiled, 0)), shape(table(fresh.compiled, 0)), `version ${version}`);
      assert.deepEqual(kept.errors, fresh.errors, `version ${version}: errors`);
      const rules = new Map((table(kept.compiled, 0)?.buckets().get(null) ?? []).map((x) => [x.routeKey, x.rule] as const));
      // A rule with per-config state is this version's compile, never the previous version's.
      for (const r of routes) if (r.rules[0]?.traffic && rulesBefore.has(r.key)) assert.notEqual(rules.get(r.key), rulesBefore.get(r.key), `version ${version}: ${r.key}`);
      rulesBefore = rules;
      perVersion += routes.filter((r) => r.rules[0]?.traffic).length;
    }
    assert.ok(perVersion > 30, 'the sequence has rules compiled per version');
    assert.ok(backendChanges > 3, 'the sequence changes a backend');
    if (patched) assert.ok(patchedVersions > 20, 'the compile was given patched configs');
  });
  }

  it('two runtimes (their own pools) compiling the same IR objects never take each other\'s tables', async () => {
    const a = prefixRoute('a', '/a');
    const binds = [bind(80, [listener('one', [a.key])])];
    const cfg = ir(binds, [a], 'v1');
    // Both fresh, so their memos count backend epochs alike (the epoch alone would not tell them apart).
    const ownPools = new UpstreamPools();
    const otherPools = new UpstreamPools();
    const first = compileConfig(cfg, { pools: ownPools, secureContexts: new SecureContextCache(), logger: silentLogger }).compiled;
    try {
      const second = compileConfig(cfg, { pools: otherPools, secureContexts: new SecureContextCache(), logger: silentLogger }).compiled;
      assert.notEqual(table(second, 0), table(first, 0));
      const dispatcher = table(second, 0)?.match('example.com', request('/a'))?.rule.backends.pick()?.backend?.endpoints.all()[0]?.dispatcher;
      assert.ok(dispatcher && second.dispatchers.has(dispatcher) && !first.dispatchers.has(dispatcher), 'the second table dials through its own pools');
    } finally {
      await Promise.all([ownPools.close(0), otherPools.close(0)]);
    }
  });

  it('a compile given up after its backends (a newer config came) does not hide their change from the next one', () => {
    const ctx = context();
    const [a, b] = [route('default/a', [rule('default/a/rule/0', { matches: [{ path: { type: 'PathPrefix', value: '/a' } }], backends: [{ backendKey: 'svcA', weight: 1, filters: [] }] })]), route('default/b', [rule('default/b/rule/0', { matches: [{ path: { type: 'PathPrefix', value: '/b' } }], backends: [{ backendKey: 'svcB', weight: 1, filters: [] }] })])];
    const binds = [bind(80, [listener('one', [a.key, b.key])])];
    const [a1, b1] = [backend('svcA', [7001]), backend('svcB', [7002])];
    const v1 = config({ version: 'v1', binds, routes: [a, b], backends: [a1, b1] });
    compileConfig(v1, ctx);
    // v2 changes svcA; its compile stops just past the backends (the runtime moved on to a newer config).
    const a2 = backend('svcA', [7011]);
    const none = { set: {}, removed: [] };
    const job = compileConfigJob(patchConfig(v1, 'v2', [...binds], none, { set: { svcA: a2 }, removed: [] }), ctx);
    for (let i = 0; i < 3; i++) job.next();
    // v3, patched from v1 (what the listener was last checked for), changes svcB from v2's.
    const v3 = patchConfig(v1, 'v3', [...binds], none, { set: { svcA: a2, svcB: backend('svcB', [7012]) }, removed: [] });
    const t3 = table(compileConfig(v3, ctx).compiled, 0);
    const port = (path: string) => t3?.match('example.com', request(path))?.rule.backends.pick()?.backend?.endpoints.all()[0]?.port;
    assert.equal(port('/b'), 7012);
    assert.equal(port('/a'), 7011, 'the route reading the backend changed in the given-up compile reads the new one');
  });
});

