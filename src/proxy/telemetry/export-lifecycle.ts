/**
 * The life of a compiled config (compile/lifecycle.ts) as an OTLP export sees it: a request that
 * will still emit a span or log record holds the config, and the export's provider is shut down
 * once the config has retired and the last such request has left.
 */
export interface ExportLifecycle {
  readonly enter: () => void;
  readonly leave: () => void;
  onRetire(close: () => void): void;
}
