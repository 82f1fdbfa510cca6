import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProviderHealth, ProviderStalledError, type HeadWait } from './provider-health.ts';

const EVICT_ON_FIRST: NonNullable<Parameters<ProviderHealth['failed']>[3]> = { eviction: { consecutiveFailures: 1, durationMs: 60_000 } };

/** A wait that records what ended it. */
function waiter(): HeadWait & { ended: unknown[] } {
  const ended: unknown[] = [];
  return { ended, interrupt: (err) => void ended.push(err) };
}

describe('ProviderHealth: waits for a stalling provider', () => {
  const cases: { name: string; status: number; spec: Parameters<ProviderHealth['failed']>[3]; interrupted: boolean }[] = [
    { name: 'a timeout that evicts ends the other waits at once', status: 504, spec: EVICT_ON_FIRST, interrupted: true },
    { name: 'a timeout that does not evict (no health policy) leaves them waiting', status: 504, spec: undefined, interrupted: false },
    { name: 'a refused connection that evicts leaves them waiting (they may still be answered)', status: 502, spec: EVICT_ON_FIRST, interrupted: false },
  ];
  for (const c of cases) it(c.name, () => {
    let now = 1_000;
    const health = new ProviderHealth('be', ['a', 'b'], undefined, () => now);
    const timedOut = health.begin(0);
    now += 10;
    const [w1, w2, other] = [waiter(), waiter(), waiter()];
    health.begin(0);
    health.waitHead(0, w1);
    health.begin(0);
    health.waitHead(0, w2);
    health.begin(1);
    health.waitHead(1, other);
    now += 300;
    health.failed(0, timedOut, c.status, c.spec);
    assert.equal(w1.ended.length, c.interrupted ? 1 : 0);
    assert.equal(w2.ended.length, c.interrupted ? 1 : 0);
    if (c.interrupted) assert.ok(w1.ended[0] instanceof ProviderStalledError);
    assert.equal(other.ended.length, 0, 'another provider\'s waits are not touched');
  });

  it('a wait that got its head (headDone) is not ended, and each wait is ended once', () => {
    let now = 1_000;
    const health = new ProviderHealth('be', ['a'], undefined, () => now);
    const first = health.begin(0);
    const [done, waiting] = [waiter(), waiter()];
    health.waitHead(0, done);
    health.waitHead(0, waiting);
    health.headDone(0, done);
    now += 300;
    health.failed(0, first, 504, EVICT_ON_FIRST);
    const second = health.begin(0);
    health.failed(0, second, 504, EVICT_ON_FIRST);
    assert.deepEqual([done.ended.length, waiting.ended.length], [0, 1]);
  });
});

describe('ProviderHealth: one stall, one timeout per eviction', () => {
  it('a timeout of an attempt already waiting when another one\'s timeout evicted the provider is not another failure', () => {
    let now = 1_000;
    const health = new ProviderHealth('be', ['a'], undefined, () => now);
    const first = health.begin(0);
    now += 5;
    const second = health.begin(0);
    now += 1_000;
    health.failed(0, first, 504, EVICT_ON_FIRST);
    health.failed(0, second, 504, EVICT_ON_FIRST);
    const [view] = health.views();
    assert.deepEqual([view?.consecutiveFailures, view?.timesEvicted, view?.inflight], [1, 1, 0]);
  });

  it('a timeout of an attempt begun after the eviction (every provider evicted, tried anyway) counts', () => {
    let now = 1_000;
    const health = new ProviderHealth('be', ['a'], undefined, () => now);
    const first = health.begin(0);
    now += 1_000;
    health.failed(0, first, 504, EVICT_ON_FIRST);
    now += 1;
    const later = health.begin(0);
    now += 1_000;
    health.failed(0, later, 504, EVICT_ON_FIRST);
    assert.equal(health.views()[0]?.consecutiveFailures, 2);
  });
});
