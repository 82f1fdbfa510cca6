import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ProxyMetrics } from './metrics.ts';

const A = { gateway: 'default/gw', listener: 'http', route: 'default/a', backend: 'svc-a' };
const B = { gateway: 'default/gw', listener: 'http', route: 'default/b', backend: 'svc-b' };

function requestCount(text: string, route: string, status: number): number | undefined {
  const line = new RegExp(`^switchboard_requests_total\\{[^}]*route="${route}"[^}]*status="${status}"\\} (\\d+)$`, 'm').exec(text);
  return line ? Number(line[1]) : undefined;
}

describe('ProxyMetrics', () => {
  it('reports exact request counts per route and status on every read, also between reads', async () => {
    const registry = new Registry();
    const metrics = new ProxyMetrics(registry);
    for (let i = 0; i < 3; i++) metrics.requestDone(A, 200, 0.001);
    metrics.requestDone(A, 503, 0.001);
    metrics.requestDone(B, 200, 0.001);
    let text = await registry.metrics();
    assert.equal(requestCount(text, 'default/a', 200), 3);
    assert.equal(requestCount(text, 'default/a', 503), 1);
    assert.equal(requestCount(text, 'default/b', 200), 1);
    assert.match(text, /^switchboard_request_duration_seconds_count\{[^}]*route="default\/a"[^}]*\} 4$/m);

    metrics.requestDone(A, 200, 0.001);
    text = await registry.metrics();
    assert.equal(requestCount(text, 'default/a', 200), 4, 'a second read adds only what happened since the first');
    assert.equal(requestCount(text, 'default/b', 200), 1);
  });

  it('counts the requests of every runtime sharing one registry', async () => {
    const registry = new Registry();
    const first = new ProxyMetrics(registry);
    const second = new ProxyMetrics(registry);
    first.requestDone(A, 200, 0.001);
    second.requestDone(A, 200, 0.001);
    second.requestDone(A, 200, 0.001);
    assert.equal(requestCount(await registry.metrics(), 'default/a', 200), 3);
  });

  it('shows held-back counts through getMetricsAsJSON, which the cluster aggregation reads', async () => {
    const registry = new Registry();
    new ProxyMetrics(registry).requestDone(B, 404, 0.001);
    const requests = (await registry.getMetricsAsJSON()).find((m) => m.name === 'switchboard_requests_total');
    assert.deepEqual(requests?.values.map((v) => [v.labels.route, v.labels.status, v.value]), [['default/b', 404, 1]]);
  });
});
