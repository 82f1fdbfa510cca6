import { Counter, Gauge, type Registry } from 'prom-client';

/** The control plane's own metrics; the proxy registers its metrics in the same registry. */
export class ControlPlaneMetrics {
  readonly #versionInfo: Gauge<'version'>;
  readonly #reloads: Counter<'result'>;
  readonly #sourceErrors: Gauge;

  constructor(registry: Registry) {
    this.#versionInfo = new Gauge({ name: 'switchboard_config_version_info', help: 'The version (content hash) of the config being served; always 1.', labelNames: ['version'], registers: [registry] });
    this.#reloads = new Counter({ name: 'switchboard_config_reloads_total', help: 'Configuration reloads by result; error means the source, the translation or the apply reported a problem.', labelNames: ['result'], registers: [registry] });
    this.#sourceErrors = new Gauge({ name: 'switchboard_source_errors', help: 'Problems in the configuration sources right now (YAML errors, malformed or duplicate objects).', registers: [registry] });
    // Both results exist from the start so a rate() over them never sees a missing series.
    this.#reloads.inc({ result: 'success' }, 0);
    this.#reloads.inc({ result: 'error' }, 0);
  }

  servingVersion(version: string): void {
    this.#versionInfo.reset();
    this.#versionInfo.set({ version }, 1);
  }

  reloaded(result: 'success' | 'error'): void {
    this.#reloads.inc({ result });
  }

  sourceErrors(count: number): void {
    this.#sourceErrors.set(count);
  }
}
