import type { ProxyConfig } from '../ir/types.ts';

/** What applying a config reported: the version now served and the parts that failed. */
export interface ApplyResult {
  readonly version: string;
  readonly errors: readonly unknown[];
}

/**
 * The part of the proxy runtime (src/proxy/runtime.ts) distribution drives. Kept structural so
 * distribution can be tested with a small double and the runtime can grow without touching it.
 */
export interface ConfigRuntime {
  apply(config: ProxyConfig): Promise<ApplyResult>;
  /** Resolves (or returns) once every bind of the applied config is listening; `false` means not yet. */
  ready(): unknown;
  close(options: { graceMs: number }): Promise<void>;
  /** AI provider health (scores, evictions) for the admin API; only a runtime in this process has it. */
  providerHealth?(): unknown;
}

/**
 * Hands each new ProxyConfig to the proxies that serve it: one runtime in this process, or one
 * per cluster worker. The control plane publishes; the distributor knows where proxies run.
 */
export interface Distributor {
  start(): Promise<void>;
  /**
   * Resolves once every proxy has applied `config` (or failed to). `secretValues` are the
   * config's Secret-derived values (the translator's secretValues): every proxy process scrubs its
   * log lines of them before it compiles the config. They never travel inside the config.
   */
  publish(config: ProxyConfig, secretValues?: readonly string[]): Promise<ApplyResult>;
  /** true once a config is applied and its binds are listening somewhere. */
  isReady(): boolean;
  /** Prometheus text of this process's registry together with every proxy's metrics. */
  metrics(): Promise<string>;
  readonly metricsContentType: string;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes. */
  close(graceMs: number): Promise<void>;
}
