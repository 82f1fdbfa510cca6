import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * The controller's config distribution metrics. Labels are bounded: `result` is a fixed set, and
 * gateways are named by the cluster's own objects (never by what a proxy sends before it is
 * authorized); proxies are counted, never labelled.
 */
export class DistributionMetrics {
  readonly #connected: Gauge;
  readonly #responses: Counter<'result'>;
  readonly #nacks: Counter<'namespace' | 'gateway'>;
  readonly #refused: Counter<'reason'>;
  readonly #resources: Counter;

  constructor(registry: Registry) {
    this.#connected = new Gauge({ name: 'switchboard_xds_connected_proxies', help: 'Proxies connected to this controller\'s config stream.', registers: [registry] });
    this.#responses = new Counter({ name: 'switchboard_xds_responses_total', help: 'Config responses answered by proxies, by result (ack, nack).', labelNames: ['result'], registers: [registry] });
    this.#nacks = new Counter({ name: 'switchboard_xds_nacks_total', help: 'Config updates a proxy refused (NACK), by the gateway it serves.', labelNames: ['namespace', 'gateway'], registers: [registry] });
    this.#refused = new Counter({ name: 'switchboard_xds_streams_refused_total', help: 'Config streams refused before any config was sent, by reason (unauthenticated, permission_denied, invalid, unavailable).', labelNames: ['reason'], registers: [registry] });
    this.#resources = new Counter({ name: 'switchboard_xds_resources_sent_total', help: 'Resources (binds, routes, backends) sent to proxies, adds and removes.', registers: [registry] });
  }

  connected(delta: 1 | -1): void {
    this.#connected.inc(delta);
  }

  answered(result: 'ack' | 'nack'): void {
    this.#responses.inc({ result });
  }

  nack(gateway: { namespace: string; name: string }): void {
    this.#nacks.inc({ namespace: gateway.namespace, gateway: gateway.name });
  }

  refused(reason: 'unauthenticated' | 'permission_denied' | 'invalid' | 'unavailable'): void {
    this.#refused.inc({ reason });
  }

  sent(resources: number): void {
    this.#resources.inc(resources);
  }
}
