import type { Counter } from 'prom-client';

type RequestLabelName = 'gateway' | 'listener' | 'route' | 'backend' | 'status';

export interface SeriesLabels {
  readonly gateway: string;
  readonly listener: string;
  readonly route: string;
  readonly backend: string;
}

interface PendingSeries {
  readonly labels: Record<RequestLabelName, string | number>;
  count: number;
}

type ByStatus = Map<number, PendingSeries>;
/** gateway → listener → route → backend → status. */
type Tree = Map<string, Map<string, Map<string, Map<string, ByStatus>>>>;

/**
 * Request counts held back from a prom-client Counter until it is read. A labelled `inc` builds
 * and hashes a key string and validates the label set on every call (~0.6 µs measured here); one
 * Map level per label, keyed by the config's own string instances (their hashes are cached), is
 * ~0.05 µs. The counter's `collect` hook, which prom-client runs on every read of the registry
 * (scrape, cluster aggregation), adds what accumulated, so readers see exact totals.
 */
export class PendingCounts {
  readonly #tree: Tree = new Map();

  add(labels: SeriesLabels, status: number): void {
    const byStatus = branch(branch(branch(branch(this.#tree, labels.gateway), labels.listener), labels.route), labels.backend);
    const series = byStatus.get(status);
    if (series) {
      series.count++;
      return;
    }
    const { gateway, listener, route, backend } = labels;
    byStatus.set(status, { labels: { gateway, listener, route, backend, status }, count: 1 });
  }

  /** Adds every held-back count to `counter` and forgets the series (bounded by what happened since the last read). */
  flushInto(counter: Counter<RequestLabelName>): void {
    for (const byListener of this.#tree.values()) {
      for (const byRoute of byListener.values()) {
        for (const byBackend of byRoute.values()) {
          for (const byStatus of byBackend.values()) {
            for (const series of byStatus.values()) counter.inc(series.labels, series.count);
          }
        }
      }
    }
    this.#tree.clear();
  }
}

/** The map under `key`, created empty on first use. */
function branch<K, C extends Map<unknown, unknown>>(level: Map<K, C>, key: K): C {
  let next = level.get(key);
  if (next === undefined) {
    next = new Map() as C;
    level.set(key, next);
  }
  return next;
}
