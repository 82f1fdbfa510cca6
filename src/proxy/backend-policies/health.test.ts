import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PassiveHealth } from './health.ts';

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

  it('never evicts without an eviction block', () => {
    const h = new PassiveHealth({ unhealthyCondition: 'true' }, 1, () => 0);
    h.record(0, 'unhealthy');
    assert.equal(h.evicted(0), false);
  });
});
