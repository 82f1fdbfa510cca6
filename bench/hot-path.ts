/**
 * Per-call cost of the proxy's own per-request helpers, in-process (no sockets), best of 7 rounds.
 * End-to-end runs on this shared 2-core machine cannot resolve sub-microsecond changes; this can.
 * Run it in two trees (before/after a change) to compare:
 *
 *   node bench/hot-path.ts
 */
import { endToEndHeaders, endToEndResponseHeaders } from '../src/proxy/http/headers.ts';
import { ProxyMetrics } from '../src/proxy/telemetry/metrics.ts';

const ROUNDS = 7;
const CALLS = 300_000;

/** What wrk sends and what the nginx upstream answers in `npm run bench`. */
const requestHeaders = { host: '127.0.0.1:8080', 'user-agent': 'wrk', accept: '*/*', connection: 'keep-alive' };
const responseHeaders = { server: 'nginx/1.22.1', date: 'Mon, 23 Nov 2026 11:00:00 GMT', 'content-type': 'application/octet-stream', 'content-length': '24', connection: 'keep-alive' };
/** Label values are config strings, the same instances on every request. */
const labels = { gateway: 'default/bench', listener: 'http', route: 'default/bench', backend: 'default/upstream:8080' };

const metrics = new ProxyMetrics();
let sink = 0;

function bench(name: string, fn: () => unknown): void {
  let best = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) if (fn() !== undefined) sink++;
    best = Math.min(best, ((performance.now() - t0) * 1e6) / CALLS);
  }
  console.log(`| ${name} | ${best.toFixed(0)} |`);
}

console.log('| helper | ns/call (best of 7) |\n|---|---:|');
bench('endToEndHeaders (wrk request)', () => endToEndHeaders(requestHeaders));
bench('endToEndResponseHeaders (nginx response)', () => endToEndResponseHeaders(responseHeaders));
bench('ProxyMetrics.requestDone', () => metrics.requestDone(labels, 200, 0.0003));
if (sink < 0) console.log(sink);
