/**
 * AI provider health as Prometheus gauges, read from the ProviderHealthBoard when scraped (nothing
 * is done per request). Labels are the backend key and the provider name, both from the config,
 * so cardinality is bounded by the config, never by traffic.
 */
import { Gauge, type Aggregator, type Registry } from 'prom-client';
import type { ProviderHealthBoard, ProviderHealthView } from './provider-health.ts';

type Label = 'backend' | 'provider';

/**
 * Each worker process keeps its own provider health; `aggregator` says how the primary combines
 * the workers' values (distribute/cluster/primary.ts): the mean score and latency, evicted if any
 * worker evicted it (until the latest end), evictions and attempts in flight summed.
 */
const GAUGES: readonly { readonly name: string; readonly help: string; readonly aggregator: Aggregator; readonly value: (v: ProviderHealthView) => number }[] = [
  { name: 'switchboard_llm_provider_health_score', help: 'AI provider health score (EWMA of successes, 0..100).', aggregator: 'average', value: (v) => v.score },
  { name: 'switchboard_llm_provider_latency_seconds', help: 'AI provider answer latency (EWMA; time to the response head for streams).', aggregator: 'average', value: (v) => v.latencyMs / 1000 },
  { name: 'switchboard_llm_provider_evicted', help: '1 while the AI provider is evicted, else 0.', aggregator: 'max', value: (v) => (v.evictedUntil === null ? 0 : 1) },
  { name: 'switchboard_llm_provider_evicted_until_seconds', help: 'Unix time the AI provider eviction ends (0 when not evicted).', aggregator: 'max', value: (v) => (v.evictedUntil === null ? 0 : v.evictedUntil / 1000) },
  { name: 'switchboard_llm_provider_times_evicted', help: 'How many times the AI provider has been evicted (eviction durations grow with it).', aggregator: 'sum', value: (v) => v.timesEvicted },
  { name: 'switchboard_llm_provider_inflight', help: 'Attempts to the AI provider waiting for its answer.', aggregator: 'sum', value: (v) => v.inflight },
];

/** Registers the gauges on `registry` (once per registry: several runtimes in one process share them, the last board wins). */
export function registerProviderHealthMetrics(registry: Registry, board: ProviderHealthBoard): void {
  for (const g of GAUGES) {
    registry.removeSingleMetric(g.name);
    new Gauge<Label>({
      name: g.name,
      help: g.help,
      labelNames: ['backend', 'provider'],
      aggregator: g.aggregator,
      registers: [registry],
      collect() {
        this.reset();
        for (const { backend, providers } of board.snapshot()) for (const v of providers) this.set({ backend, provider: v.provider }, g.value(v));
      },
    });
  }
}
