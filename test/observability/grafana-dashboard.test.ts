/**
 * The Grafana dashboard shipped in deploy/grafana names only series the proxy exports: every
 * metric in every panel's PromQL is registered by ProxyMetrics (with the GenAI, MCP and policy
 * metrics) or the provider-health gauges, histogram series (_bucket, _sum, _count) included.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ProviderHealthBoard } from '../../src/proxy/llm/gateway/provider-health.ts';
import { ProxyMetrics } from '../../src/proxy/telemetry/metrics.ts';
import { registerProviderHealthMetrics } from '../../src/proxy/llm/gateway/provider-health-metrics.ts';

interface Panel { title: string; type: string; targets?: { expr: string }[] }

const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/switchboard.json', import.meta.url), 'utf8')) as { panels: Panel[] };

async function exportedSeries(): Promise<Set<string>> {
  const registry = new Registry();
  new ProxyMetrics(registry);
  registerProviderHealthMetrics(registry, new ProviderHealthBoard());
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(m.name + suffix);
  }
  return names;
}

/** Metric names in a PromQL expression: identifiers followed by a selector `{` or a range `[`. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{[]/g)].map((m) => m[1]).filter((n) => !['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'].includes(n));
}

describe('deploy/grafana/switchboard.json', () => {
  it('every metric a panel queries is exported by the proxy', async () => {
    const exported = await exportedSeries();
    const queried = dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr).map((name) => ({ panel: p.title, name }))));
    assert.ok(queried.length >= 10, 'the dashboard queries metrics');
    const missing = queried.filter((q) => !exported.has(q.name));
    assert.deepEqual(missing, []);
  });

  it('covers traffic, errors, latency, tokens by model and consumer, and MCP tools', () => {
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const needle of ['switchboard_requests_total', 'status=~"5.."', 'switchboard_request_duration_seconds_bucket', 'gen_ai_request_model', 'gen_ai_client_token_usage_sum', 'gen_ai_server_time_to_first_token_seconds_bucket', 'gen_ai_tool_name']) {
      assert.ok(exprs.includes(needle), needle);
    }
  });
});
