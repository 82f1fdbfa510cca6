import type { Registry } from 'prom-client';
import type { ProxyConfig } from '../ir/types.ts';
import type { ApplyResult, ConfigRuntime, Distributor } from './types.ts';

/**
 * `--workers 1`: the proxy runtime lives in this process and shares its metrics registry, so
 * there is nothing to ship and nothing to aggregate.
 */
export class InProcessDistributor implements Distributor {
  readonly #runtime: ConfigRuntime;
  readonly #registry: Registry;
  #ready = false;

  constructor(runtime: ConfigRuntime, registry: Registry) {
    this.#runtime = runtime;
    this.#registry = registry;
  }

  async start(): Promise<void> {}

  /** Secret values need no shipping: the proxy logs through this process's logger, which the gateway already scrubs. */
  async publish(config: ProxyConfig): Promise<ApplyResult> {
    const result = await this.#runtime.apply(config);
    this.#ready = (await this.#runtime.ready()) !== false;
    return result;
  }

  isReady(): boolean {
    return this.#ready;
  }

  metrics(): Promise<string> {
    return this.#registry.metrics();
  }

  get metricsContentType(): string {
    return this.#registry.contentType;
  }

  async close(graceMs: number): Promise<void> {
    this.#ready = false;
    await this.#runtime.close({ graceMs });
  }
}
