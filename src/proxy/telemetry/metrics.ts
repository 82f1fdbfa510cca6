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

type RequestCounter = Counter<string>;
type DurationHistogram = Histogram<string>;

const REQUEST_LABELS = ['gateway', 'listener', 'route', 'backend', 'status'];
const DURATION_LABELS = ['gateway', 'listener', 'route', 'backend'];

/** The held-back counts of each requests counter, found again when another ProxyMetrics reuses it. */
const pendingByCounter = new WeakMap<RequestCounter, PendingCounts>();

/**
 * The proxy's Prometheus metrics. Label values come from config keys and the status code only, so
 * cardinality is bounded by the config, never by request data.
 */
export class ProxyMetrics {
  readonly #registry: Registry;
  #requests: RequestCounter;
  /** Undefined when the registry already held a counter we did not create: count directly then. */
  #pending: PendingCounts | undefined;
  #duration: DurationHistogram;
  /** frontend metrics.attributes label names the request metrics carry (metric-attributes.ts). */
  #attributeNames: readonly string[] = [];
  readonly #connectErrors: Counter<'backend'>;
  readonly activeConnections: Gauge;

  constructor(registry: Registry = new Registry()) {
    this.#registry = registry;
    this.#requests = reuse(registry, 'switchboard_requests_total', () => createRequestCounter(registry, []));
    this.#pending = pendingByCounter.get(this.#requests);
    this.#duration = reuse(registry, 'switchboard_request_duration_seconds', () => createDurationHistogram(registry, []));
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

  /**
   * `attributes`: the request's metrics.attributes labels (only binds that configure them pass
   * any; the others keep the allocation-free path).
   */
  requestDone(labels: RequestLabels, status: number, seconds: number, attributes?: Readonly<Record<string, string>>): void {
    if (attributes !== undefined) {
      this.#carry(attributes);
      const { gateway, listener, route, backend } = labels;
      this.#requests.inc({ gateway, listener, route, backend, status, ...attributes });
      this.#duration.observe({ gateway, listener, route, backend, ...attributes }, seconds);
      return;
    }
    if (this.#pending) this.#pending.add(labels, status);
    else this.#requests.inc({ gateway: labels.gateway, listener: labels.listener, route: labels.route, backend: labels.backend, status });
    // The config's own label object, passed as is (no copy per request).
    this.#duration.observe(labels as unknown as Readonly<Record<string, string>>, seconds);
  }

  /**
   * Prometheus label names are fixed per metric: the first request carrying an attribute name the
   * metrics lack recreates both request metrics with it (their counts restart, which rate() reads
   * as a counter reset). Happens when a config adds an attribute name, never per request after.
   */
  #carry(attributes: Readonly<Record<string, string>>): void {
    const names = Object.keys(attributes);
    if (names.every((n) => this.#attributeNames.includes(n))) return;
    this.#attributeNames = [...new Set([...this.#attributeNames, ...names])].sort();
    this.#registry.removeSingleMetric('switchboard_requests_total');
    this.#registry.removeSingleMetric('switchboard_request_duration_seconds');
    this.#requests = createRequestCounter(this.#registry, this.#attributeNames);
    this.#pending = pendingByCounter.get(this.#requests);
    this.#duration = createDurationHistogram(this.#registry, this.#attributeNames);
  }

  connectError(backend: string): void {
    this.#connectErrors.inc({ backend });
  }
}

function createRequestCounter(registry: Registry, attributeNames: readonly string[]): RequestCounter {
  const pending = new PendingCounts();
  const counter: RequestCounter = new Counter({
    name: 'switchboard_requests_total',
    help: 'Requests handled by the proxy, by route, backend and response status (plus metrics.attributes labels).',
    labelNames: [...REQUEST_LABELS, ...attributeNames],
    registers: [registry],
    collect() {
      pending.flushInto(this);
    },
  });
  pendingByCounter.set(counter, pending);
  return counter;
}

function createDurationHistogram(registry: Registry, attributeNames: readonly string[]): DurationHistogram {
  return new Histogram({
    name: 'switchboard_request_duration_seconds',
    help: 'Time from the first request byte to the last response byte.',
    labelNames: [...DURATION_LABELS, ...attributeNames],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
}

/** Several runtimes (tests, workers) may share one registry: register each metric once. */
function reuse<M extends Metric>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}
