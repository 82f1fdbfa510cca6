import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../common/logger.ts';
import type { BackendPolicy, TrafficPolicy } from '../../ir/policy.ts';
import type { RouteRule } from '../../ir/types.ts';
import { compileBackend, type CompiledBackend } from '../backends/backend.ts';
import { BackendPolicyCompiler } from '../policies/backend/compile.ts';
import { UpstreamPools } from '../policies/backend/pools.ts';
import { backend, rule } from '../testing/config.ts';
import { CompiledLifecycle } from './lifecycle.ts';
import { compileRule } from './rule.ts';

const deny = (expression: string): TrafficPolicy => ({
  authorization: { rules: [{ action: 'Deny', matchExpressions: [expression], source: 'ProxyPolicy/default/p' }] },
  sources: { authorization: ['ProxyPolicy/default/p'] },
});
const http = (version: 'HTTP1' | 'HTTP2'): BackendPolicy => ({ http: { version }, sources: { http: ['BackendPolicy/default/b'] } });

describe('compileRule: per-listener lookups', () => {
  const pools = new UpstreamPools();
  after(() => pools.close(100));
  const errors: string[] = [];
  const svc = compileBackend(backend('svc', [8080]), pools, (m) => errors.push(m));
  const backendOf = (key: string): CompiledBackend | undefined => (key === 'svc' ? svc : undefined);
  const compile = (r: RouteRule) => compileRule('default/r', r, backendOf, (m) => errors.push(m), {
    logger: silentLogger, lifecycle: new CompiledLifecycle(), backendPolicies: new BackendPolicyCompiler(pools, (m) => errors.push(m)),
  });

  it('a listener with its own traffic or backend policy gets it; any other listener the rule\'s own', () => {
    const [plainBackend, twoBackend] = [http('HTTP1'), http('HTTP2')];
    const compiled = compile(rule('default/r/rule/0', {
      traffic: deny('true'),
      trafficByListener: { 'default/gw/two': deny('false') },
      backends: [{ backendKey: 'svc', weight: 1, filters: [], backendPolicy: plainBackend, backendPolicyByListener: { 'default/gw/two': twoBackend } }],
    }));
    assert.deepEqual(errors, []);
    const [one, two] = [compiled.trafficFor('default/gw/one'), compiled.trafficFor('default/gw/two')];
    assert.ok(one && two);
    assert.notEqual(one, two);
    assert.equal(compiled.trafficFor('default/gw/other'), one);
    const pick = compiled.backends.pick();
    assert.equal(pick?.backendPolicyFor('default/gw/one'), plainBackend);
    assert.equal(pick?.backendPolicyFor('default/gw/two'), twoBackend);
    const [compiledOne, compiledTwo] = [pick?.compiledPolicyFor('default/gw/one'), pick?.compiledPolicyFor('default/gw/two')];
    assert.ok(compiledOne && compiledTwo);
    assert.notEqual(compiledOne, compiledTwo);
    assert.equal(pick?.compiledPolicyFor('default/gw/other'), compiledOne);
    assert.equal(pick?.clientFormatFor('default/gw/two'), pick?.clientFormatFor('default/gw/one'));
  });

  it('rules without policies share their lookup functions (no closure per rule at 10k routes)', () => {
    const plain = (n: number) => compile(rule(`default/r/rule/${n}`, { backends: [{ backendKey: 'svc', weight: 1, filters: [] }] }));
    const [a, b] = [plain(1), plain(2)];
    assert.equal(a.trafficFor, b.trafficFor);
    assert.equal(a.trafficFor('default/gw/one'), undefined);
    const [pa, pb] = [a.backends.pick(), b.backends.pick()];
    assert.ok(pa && pb);
    assert.equal(pa.backendPolicyFor, pb.backendPolicyFor);
    assert.equal(pa.compiledPolicyFor, pb.compiledPolicyFor);
    assert.equal(pa.clientFormatFor, pb.clientFormatFor);
    assert.equal(pa.clientFormatFor('default/gw/one'), 'gateway');
  });
});
