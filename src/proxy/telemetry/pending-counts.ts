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

/**
 * Request counts held back from a prom-client Counter until it is read. A labelled `inc` hashes
 * and validates the label set on every call (~2 µs on this machine); a Map hit on a joined key is
 * ~0.1 µs. The counter's `collect` hook, which prom-client runs on every read of the registry
 * (scrape, cluster aggregation), adds what accumulated, so readers see exact totals.
 */
export class PendingCounts {
  readonly #series = new Map<string, PendingSeries>();

  add(labels: SeriesLabels, status: number): void {
    const key = `${labels.gateway}\n${labels.listener}\n${labels.route}\n${labels.backend}\n${status}`;
    const series = this.#series.get(key);
    if (series) {
      series.count++;
      return;
    }
    const { gateway, listener, route, backend } = labels;
    this.#series.set(key, { labels: { gateway, listener, route, backend, status }, count: 1 });
  }

  /** Adds every held-back count to `counter` and forgets the series (bounded by what happened since the last read). */
  flushInto(counter: Counter<RequestLabelName>): void {
    for (const series of this.#series.values()) counter.inc(series.labels, series.count);
    this.#series.clear();
  }
}
