import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { BackendPolicy } from '../../../ir/policy.ts';
import { compileBackend } from '../../backends/backend.ts';
import { UpstreamPools } from './pools.ts';
import { backend } from '../../testing/config.ts';
import { compileBackendPolicy, type CompiledBackendPolicy } from './compile.ts';
import { HealthStates, PassiveHealth } from './health.ts';

describe('PassiveHealth', () => {
  it('one unhealthy outcome evicts when no threshold is set; back-off grows with each eviction', () => {
    let now = 0;
    const h = new PassiveHealth({ eviction: { durationMs: 1000 } }, 2, () => now);
    h.record(0, 'unhealthy');
    assert.equal(h.evicted(0), true);
    assert.deepEqual([h.pick(), h.pick()], [1, 1]);
    now = 1000;
    assert.equal(h.evicted(0), false);
    h.record(0, 'unhealthy');
    now = 2999;
    assert.equal(h.evicted(0), true, 'second eviction lasts 2 × duration');
    now = 3000;
    assert.equal(h.evicted(0), false);
  });

  it('plain failures lower the score but evict only through a threshold', () => {
    const h = new PassiveHealth({ eviction: {} }, 1, () => 0);
    for (let i = 0; i < 5; i++) h.record(0, 'failure');
    assert.equal(h.evicted(0), false);
    const counted = new PassiveHealth({ eviction: { consecutiveFailures: 3 } }, 1, () => 0);
    counted.record(0, 'failure');
    counted.record(0, 'success');
    counted.record(0, 'failure');
    counted.record(0, 'failure');
    assert.equal(counted.evicted(0), false, 'a success resets the run');
    counted.record(0, 'failure');
    assert.equal(counted.evicted(0), true);
  });

  it('healthThreshold evicts on the EWMA score; restoreHealth sets the score on return', () => {
    let now = 0;
    const h = new PassiveHealth({ eviction: { healthThreshold: 50, restoreHealth: 100, durationMs: 10 } }, 1, () => now);
    h.record(0, 'failure');
    assert.equal(h.evicted(0), false, '100 → 70 stays above 50');
    h.record(0, 'failure');
    h.record(0, 'failure');
    assert.equal(h.evicted(0), true, '70 → 49 → below 50');
    now = 10;
    assert.equal(h.evicted(0), false);
    h.record(0, 'failure');
    assert.equal(h.evicted(0), false, 'restored to 100, one failure is not enough');
  });

  it('uses evicted endpoints when every endpoint is evicted', () => {
    const h = new PassiveHealth({ eviction: {} }, 2, () => 0);
    h.record(0, 'unhealthy');
    h.record(1, 'unhealthy');
    const picks = new Set([h.pick(), h.pick()]);
    assert.deepEqual([...picks].sort(), [0, 1]);
  });

  it('evictFor evicts whatever the policy, only ever lengthens a running eviction, and counts as an eviction', () => {
    let now = 0;
    const h = new PassiveHealth({}, 2, () => now);
    h.evictFor(0, 500);
    h.evictFor(0, 100);
    assert.equal(h.state(0)?.timesEvicted, 1);
    now = 499;
    assert.equal(h.evicted(0), true, 'the shorter second request did not shorten it');
    now = 500;
    assert.equal(h.evicted(0), false);
    now = 900;
    h.evictFor(1, 100);
    now = 1000; // ran out, and nothing looked at it since
    h.evictFor(1, 100);
    assert.equal(h.state(1)?.timesEvicted, 2, 'an eviction that ran out unnoticed is over: this is a second one');
  });

  it('keeps an EWMA of the latency its callers measure (the first sample sets it)', () => {
    const h = new PassiveHealth({}, 1, () => 0);
    h.record(0, 'success');
    assert.equal(h.state(0)?.latencyMs, 0, 'no sample: none measured');
    h.record(0, 'success', 100);
    assert.equal(h.state(0)?.latencyMs, 100);
    h.record(0, 'failure', 200);
    assert.equal(h.state(0)?.latencyMs, 130);
  });

  it('never evicts without an eviction block', () => {
    const h = new PassiveHealth({ unhealthyCondition: 'true' }, 1, () => 0);
    h.record(0, 'unhealthy');
    assert.equal(h.evicted(0), false);
  });
});

describe('passive health across config swaps (HealthStates)', () => {
  const pools = new UpstreamPools();
  const states = new HealthStates();
  const noErrors = (m: string) => assert.fail(m);
  after(() => pools.close(0));

  /** A fresh IR policy object each time, as a new config version brings. */
  const policyFrom = (source: string): BackendPolicy => ({
    health: { unhealthyCondition: 'response.code >= 500', eviction: { durationMs: 60_000 } },
    sources: { health: [source] },
  });
  const compileFor = (backendKey: string, ports: readonly number[], source = 'ProxyPolicy/default/health') =>
    compileBackendPolicy(policyFrom(source), compileBackend(backend(backendKey, ports), pools, noErrors), pools, noErrors, states);
  const picked = (p: CompiledBackendPolicy, n = 6) => new Set(Array.from({ length: n }, () => p.pickTarget()?.port));

  it('an eviction survives a swap that keeps the endpoint; new endpoints start healthy', () => {
    const v1 = compileFor('svc', [1001, 1002]);
    states.retainUsed();
    assert.deepEqual([...picked(v1)].sort(), [1001, 1002]);
    const evicted = v1.pickTarget()!;
    v1.recordOutcome(evicted, 503);
    assert.equal(picked(v1).has(evicted.port), false);

    const v2 = compileFor('svc', [1001, 1002, 1003]);
    states.retainUsed();
    const after = picked(v2);
    assert.equal(after.has(evicted.port), false, 'still evicted in the new config');
    assert.ok(after.has(1003), 'the added endpoint serves');
  });

  const cases: { name: string; next: () => CompiledBackendPolicy; evictedStill: boolean }[] = [
    { name: 'another backend with the same address does not share it', next: () => compileFor('other', [2001, 2002]), evictedStill: false },
    { name: 'a health member from another policy object does not share it', next: () => compileFor('svc2', [2001, 2002], 'ProxyPolicy/default/other'), evictedStill: false },
    { name: 'the same backend and policy does', next: () => compileFor('svc2', [2001, 2002]), evictedStill: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const first = compileFor('svc2', [2001, 2002]);
      const target = first.pickTarget()!;
      first.recordOutcome(target, 500);
      const next = c.next();
      states.retainUsed();
      assert.equal(picked(next).has(target.port), !c.evictedStill);
      // Reset for the next row: forget everything.
      states.retainUsed();
    });
  }

  it('an endpoint dropped by one config and back in a later one starts healthy', () => {
    const v1 = compileFor('svc3', [3001, 3002]);
    states.retainUsed();
    const target = v1.pickTarget()!;
    v1.recordOutcome(target, 500);
    const other = [3001, 3002].find((p) => p !== target.port)!;
    compileFor('svc3', [other]);
    states.retainUsed();
    const v3 = compileFor('svc3', [3001, 3002]);
    states.retainUsed();
    assert.ok(picked(v3).has(target.port));
  });
});
