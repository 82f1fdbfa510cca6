import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Backend, ProxyConfig, Route } from '../../ir/types.ts';
import type { TrafficPolicy } from '../../ir/policy.ts';
import { silentLogger } from '../../common/logger.ts';
import { UpstreamPools } from '../policies/backend/pools.ts';
import type { RequestView } from '../routing/matchers.ts';
import { backend, bind, config, listener, route, rule } from '../testing/config.ts';
import { compileConfig, type CompileContext, type CompiledConfig } from './config.ts';
import { reuseMemoFor, RuleWatch } from './reuse.ts';
import { CompiledLifecycle } from './lifecycle.ts';
import { SecureContextCache } from './tls-contexts.ts';

const request = (path: string): RequestView => ({ path, query: '', method: 'GET', headers: {} });

function entry(compiled: CompiledConfig, path: string) {
  return compiled.binds[0].listeners.lookup('example.com')?.routes.match('example.com', request(path));
}

/** A route with one rule on `path`, forwarding to `backendKey`, under an optional traffic policy. */
function prefixRoute(name: string, path: string, backendKey: string, traffic?: TrafficPolicy): Route {
  return route(`default/${name}`, [rule(`default/${name}/rule/0`, {
    matches: [{ path: { type: 'PathPrefix', value: path } }],
    backends: [{ backendKey, weight: 1, filters: [] }],
    ...(traffic ? { traffic } : {}),
  })]);
}

function ir(routes: readonly Route[], backends: readonly Backend[], version: string): ProxyConfig {
  return config({ version, binds: [bind(80, [listener('http', routes.map((r) => r.key))])], routes, backends });
}

const authorization = (expression: string): TrafficPolicy => ({
  authorization: { rules: [{ action: 'Deny', matchExpressions: [expression], source: 'ProxyPolicy/default/p' }] },
  sources: { authorization: ['ProxyPolicy/default/p'] },
});

describe('compiled results reused across config versions', () => {
  const pools = new UpstreamPools();
  after(() => pools.close(100));
  const context = (): CompileContext => ({ pools, secureContexts: new SecureContextCache(), logger: silentLogger });

  it('a config with one changed route reuses the other routes\' compiled rules and entries and serves the changed one', () => {
    const ctx = context();
    const svc = backend('svc', [8080]);
    const a = prefixRoute('a', '/a', 'svc', authorization('request.headers["x-role"] != "admin"'));
    const b = prefixRoute('b', '/b', 'svc');
    const first = compileConfig(ir([a, b], [svc], 'v1'), ctx);
    assert.deepEqual(first.errors, []);
    const v1 = first.compiled;
    assert.equal(v1.binds[0].listeners.lookup('example.com')?.routes.match('example.com', request('/a'))?.rule.trafficFor('default/gw/http')?.steps.length, 1);
    const b2 = prefixRoute('b', '/b2', 'svc');
    const v2 = compileConfig(ir([a, b2], [svc], 'v2'), ctx).compiled;

    const before = entry(v1, '/a');
    const afterEdit = entry(v2, '/a');
    assert.ok(before && afterEdit);
    assert.equal(afterEdit, before, 'the unchanged route keeps its table entry');
    assert.equal(afterEdit.rule, before.rule, 'and its compiled rule');
    assert.equal(afterEdit.rule.backends.pick()?.backend, before.rule.backends.pick()?.backend, 'and the compiled backend it reads');
    // The changed route serves its new path only, from a rule compiled for it.
    assert.equal(entry(v2, '/b2')?.rule.key, 'default/b/rule/0');
    assert.notEqual(entry(v2, '/b2')?.rule, entry(v1, '/b')?.rule);
    assert.equal(entry(v2, '/b/x'), undefined);
  });

  it('a changed backend the rule reads compiles the rule again', () => {
    const ctx = context();
    const a = prefixRoute('a', '/a', 'svc');
    const v1 = compileConfig(ir([a], [backend('svc', [8080])], 'v1'), ctx).compiled;
    const v2 = compileConfig(ir([a], [backend('svc', [8081])], 'v2'), ctx).compiled;
    const rule2 = entry(v2, '/a')?.rule;
    assert.notEqual(rule2, entry(v1, '/a')?.rule);
    assert.notEqual(entry(v2, '/a'), entry(v1, '/a'));
    assert.equal(rule2?.backends.pick()?.backend?.endpoints.all()[0].port, 8081);
  });

  it('a backend that goes away is reported again and the rule compiled again', () => {
    const ctx = context();
    const a = prefixRoute('a', '/a', 'svc');
    const v1 = compileConfig(ir([a], [backend('svc', [8080])], 'v1'), ctx);
    assert.deepEqual(v1.errors, []);
    const v2 = compileConfig(ir([a], [], 'v2'), ctx);
    assert.deepEqual(v2.errors, ['default/a/rule/0: backend svc is not in the config']);
    assert.equal(entry(v2.compiled, '/a')?.rule.backends.pick()?.backend, null);
    // Reused while still missing: the error is reported on every version, not only the first.
    const v3 = compileConfig(ir([a], [], 'v3'), ctx);
    assert.equal(entry(v3.compiled, '/a')?.rule, entry(v2.compiled, '/a')?.rule);
    assert.deepEqual(v3.errors, v2.errors);
  });

  it('a bad match is reported on every version that reuses the route', () => {
    const ctx = context();
    const bad = route('default/bad', [rule('default/bad/rule/0', { matches: [{ path: { type: 'RegularExpression', value: '[' } }] })]);
    const first = compileConfig(ir([bad], [], 'v1'), ctx).errors;
    const second = compileConfig(ir([bad], [], 'v2'), ctx).errors;
    assert.equal(first.length, 1);
    assert.deepEqual(second, first);
  });

  it('a rule whose policy holds per-config state (retry, rate limit, clients) is compiled on every version', () => {
    const ctx = context();
    const svc = backend('svc', [8080]);
    const a = prefixRoute('a', '/a', 'svc', { retry: { attempts: 2 }, sources: { retry: ['ProxyPolicy/default/p'] } } as unknown as TrafficPolicy);
    const v1 = compileConfig(ir([a], [svc], 'v1'), ctx).compiled;
    const v2 = compileConfig(ir([a], [svc], 'v2'), ctx).compiled;
    assert.notEqual(entry(v2, '/a')?.rule, entry(v1, '/a')?.rule);
  });

  it('a local-only rate limit is kept, and still counts into the same buckets; a global one is compiled on every version', () => {
    const ctx = context();
    const svc = backend('svc', [8080]);
    const local = { rateLimit: { local: [{ requests: 1, unit: 'Minute' }] }, sources: { rateLimit: ['ProxyPolicy/default/rl'] } } as unknown as TrafficPolicy;
    const conditionalGlobal = {
      rateLimit: { conditional: [{ condition: 'true', policy: { global: { backendKey: 'rls', domain: 'd', descriptors: [] } } }, { policy: { local: [{ requests: 1, unit: 'Minute' }] } }] },
      sources: { rateLimit: ['ProxyPolicy/default/rl2'] },
    } as unknown as TrafficPolicy;
    const a = prefixRoute('a', '/a', 'svc', local);
    const g = prefixRoute('g', '/g', 'svc', conditionalGlobal);
    const v1 = compileConfig(ir([a, g], [svc, backend('rls', [8081])], 'v1'), ctx).compiled;
    const v2 = compileConfig(ir([a, g], [svc, backend('rls', [8081])], 'v2'), ctx).compiled;
    assert.equal(entry(v2, '/a')?.rule, entry(v1, '/a')?.rule, 'the local-only rule is kept');
    assert.notEqual(entry(v2, '/g')?.rule, entry(v1, '/g')?.rule, 'a rule that may call the rate-limit service is not');
  });

  it('a rule whose compile used the lifecycle or the endpoint resolver is compiled again', () => {
    const ctx = context();
    const svc = backend('svc', [8080]);
    const a = prefixRoute('a', '/a', 'svc');
    const v1 = compileConfig(ir([a], [svc], 'v1'), ctx).compiled;
    const kept = reuseMemoFor(ctx).rules.get(a.rules[0]);
    assert.ok(kept, 'the pure rule is kept');
    kept.touched.value = true;
    const v2 = compileConfig(ir([a], [svc], 'v2'), ctx).compiled;
    assert.notEqual(entry(v2, '/a')?.rule, entry(v1, '/a')?.rule);
  });

  it('a kept rule does not keep the config version it was compiled for alive (issue 15: one per edit)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ctx = context();
    const svc = backend('svc', [8080]);
    const [a, b] = [prefixRoute('a', '/a', 'svc'), prefixRoute('b', '/b', 'svc')];
    // Made and compiled in a function: nothing here holds v1 once it returns.
    const { v1Rule, gone } = ((v1: ProxyConfig) => ({ v1Rule: entry(compileConfig(v1, ctx).compiled, '/a')?.rule, gone: new WeakRef(v1) }))(ir([a, b], [svc], 'v1'));
    const v2 = compileConfig(ir([a, prefixRoute('b', '/b2', 'svc')], [svc], 'v2'), ctx).compiled;
    assert.equal(entry(v2, '/a')?.rule, v1Rule, 'the unchanged rule is kept');
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(gone.deref(), undefined, 'v1 (its compile\'s maps of every rule and backend) is collected while v2 serves its rule');
  });

  it('a use of the per-config resources while a rule compiles keeps that rule only from being kept; a use after marks the whole compile', () => {
    const memo = { backends: new WeakMap(), rules: new WeakMap(), touches: { count: 0 } };
    const watch = new RuleWatch(memo, new CompiledLifecycle(), (() => undefined) as never);
    const quiet = watch.compiling(() => 'pure');
    assert.deepEqual(quiet, { result: 'pure', used: false });
    const noisy = watch.compiling(() => watch.deps.endpoints({ backendKey: 'svc' } as never));
    assert.equal(noisy.used, true);
    assert.equal(watch.touched.value, false, 'a use during a compile is that rule\'s alone');
    assert.equal(watch.compiling(() => 0).used, false, 'the next rule starts clean');
    watch.deps.lifecycle.enter();
    assert.equal(watch.touched.value, true, 'a use later (a compiled step at request time) marks every rule kept from this compile');
    assert.equal(memo.touches.count, 1);
  });

  it('another runtime (other pools) or another logger never sees a kept result', () => {
    const svc = backend('svc', [8080]);
    const a = prefixRoute('a', '/a', 'svc');
    const v1 = compileConfig(ir([a], [svc], 'v1'), context()).compiled;
    const otherPools = new UpstreamPools();
    try {
      const v2 = compileConfig(ir([a], [svc], 'v2'), { pools: otherPools, secureContexts: new SecureContextCache(), logger: silentLogger }).compiled;
      assert.notEqual(entry(v2, '/a')?.rule, entry(v1, '/a')?.rule);
      assert.notEqual(entry(v2, '/a')?.rule.backends.pick()?.backend, entry(v1, '/a')?.rule.backends.pick()?.backend);
    } finally {
      void otherPools.close(100);
    }
    const ctx = context();
    const v3 = compileConfig(ir([a], [svc], 'v3'), ctx).compiled;
    const v4 = compileConfig(ir([a], [svc], 'v4'), { ...ctx, logger: { ...silentLogger } }).compiled;
    assert.notEqual(entry(v4, '/a')?.rule, entry(v3, '/a')?.rule);
  });
});
