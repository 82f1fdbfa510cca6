import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { registerAiMetrics } from './ai-metrics.ts';
import { PendingCounts } from './pending-counts.ts';

export interface RequestLabels {
  readonly gateway: string;
  readonly listener: string;
  readonly route: string;
  readonly backend: string;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

type RequestCounter = Counter<'gateway' | 'listener' | 'route' | 'backend' | 'status'>;

/** The held-back counts of each requests counter, found again when another ProxyMetrics reuses it. */
const pendingByCounter = new WeakMap<RequestCounter, PendingCounts>();

/**
 * The proxy's Prometheus metrics. Label values come from config keys and the status code only, so
 * cardinality is bounded by the config, never by request data.
 */
export class ProxyMetrics {
  readonly #requests: RequestCounter;
  /** Undefined when the registry already held a counter we did not create: count directly then. */
  readonly #pending: PendingCounts | undefined;
  readonly #duration: Histogram<'gateway' | 'listener' | 'route' | 'backend'>;
  readonly #connectErrors: Counter<'backend'>;
  readonly activeConnections: Gauge;

  constructor(registry: Registry = new Registry()) {
    this.#requests = reuse(registry, 'switchboard_requests_total', () => {
      const pending = new PendingCounts();
      const counter: RequestCounter = new Counter({
        name: 'switchboard_requests_total',
        help: 'Requests handled by the proxy, by route, backend and response status.',
        labelNames: ['gateway', 'listener', 'route', 'backend', 'status'],
        registers: [registry],
        collect() {
          pending.flushInto(this);
        },
      });
      pendingByCounter.set(counter, pending);
      return counter;
    });
    this.#pending = pendingByCounter.get(this.#requests);
    this.#duration = reuse(registry, 'switchboard_request_duration_seconds', () => new Histogram({
      name: 'switchboard_request_duration_seconds',
      help: 'Time from the first request byte to the last response byte.',
      labelNames: ['gateway', 'listener', 'route', 'backend'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    }));
    this.#connectErrors = reuse(registry, 'switchboard_upstream_connect_errors_total', () => new Counter({
      name: 'switchboard_upstream_connect_errors_total',
      help: 'Failed attempts to connect to an upstream endpoint.',
      labelNames: ['backend'],
      registers: [registry],
    }));
    this.activeConnections = reuse(registry, 'switchboard_active_connections', () => new Gauge({
      name: 'switchboard_active_connections',
      help: 'Downstream connections currently open.',
      registers: [registry],
    }));
    registerAiMetrics(registry);
  }

  requestDone(labels: RequestLabels, status: number, seconds: number): void {
    if (this.#pending) this.#pending.add(labels, status);
    else this.#requests.inc({ gateway: labels.gateway, listener: labels.listener, route: labels.route, backend: labels.backend, status });
    this.#duration.observe(labels, seconds);
  }

  connectError(backend: string): void {
    this.#connectErrors.inc({ backend });
  }
}

/** Several runtimes (tests, workers) may share one registry: register each metric once. */
function reuse<M extends Metric>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}
