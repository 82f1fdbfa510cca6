import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AggregatorRegistry, Registry } from 'prom-client';
import { ProviderHealthBoard } from './provider-health.ts';
import { registerProviderHealthMetrics } from './provider-health-metrics.ts';

/** A worker's registry with provider `a` of backend `be` after `answers` (status per answer, 10 ms each). */
function worker(answers: readonly number[]): Registry {
  let now = 1_000_000;
  const board = new ProviderHealthBoard(() => now);
  const health = board.attach('be', ['a']);
  for (const status of answers) {
    const started = health.begin(0);
    now += 10;
    health.answered(0, started, status, status === 429 ? { 'retry-after': '60' } : {}, undefined);
  }
  const registry = new Registry();
  registerProviderHealthMetrics(registry, board);
  return registry;
}

function value(text: string, name: string): number {
  const m = new RegExp(`^${name}\\{backend="be",provider="a"\\} (\\S+)$`, 'm').exec(text);
  assert.ok(m, `${name} in\n${text}`);
  return Number(m[1]);
}

describe('AI provider health metrics', () => {
  it('one process: the board read at scrape time, labelled by backend and provider', async () => {
    const text = await worker([200, 500]).metrics();
    assert.equal(value(text, 'switchboard_llm_provider_health_score'), 70);
    assert.equal(value(text, 'switchboard_llm_provider_latency_seconds'), 0.01);
    assert.equal(value(text, 'switchboard_llm_provider_evicted'), 0);
    assert.equal(value(text, 'switchboard_llm_provider_inflight'), 0);
  });

  it('workers combined as the primary does: score averaged, evicted if any worker evicted, evictions summed', async () => {
    const workers = [worker([200]), worker([429]), worker([429])];
    const json = await Promise.all(workers.map((r) => r.getMetricsAsJSON()));
    const text = await AggregatorRegistry.aggregate(json).metrics();
    assert.equal(value(text, 'switchboard_llm_provider_health_score'), 80, '(100 + 70 + 70) / 3');
    assert.equal(value(text, 'switchboard_llm_provider_evicted'), 1);
    assert.equal(value(text, 'switchboard_llm_provider_times_evicted'), 2);
  });
});
