import type { ProxyConfig } from '../../ir/types.ts';

/** Settings a worker needs that it cannot read from the command line (it is forked without one). */
export interface WorkerSettings {
  readonly logLevel: string;
  readonly logFormat: 'json' | 'text';
  /** `switchboard run --log-filter` as written (checked by the primary), for the handlers' module levels. */
  readonly logFilter?: string;
  /** How often the worker's event loop reports it is alive (see the watchdog in primary.ts). */
  readonly heartbeatMs?: number;
}

export const WORKER_SETTINGS_ENV = 'SWITCHBOARD_WORKER_SETTINGS';

/** Primary → worker. */
export type ToWorker =
  /** `secretValues`: what the worker's log lines are scrubbed of while it serves `config` (see setLoggedSecrets). */
  | { readonly type: 'switchboard:config'; readonly config: ProxyConfig; readonly secretValues: readonly string[] }
  | { readonly type: 'switchboard:metrics-request'; readonly requestId: number }
  | { readonly type: 'switchboard:shutdown'; readonly graceMs: number };

/** Worker → primary. */
export type FromWorker =
  /** Sent once the worker can take a config; the primary answers with the current one. */
  | { readonly type: 'switchboard:hello' }
  /** Sent every `heartbeatMs` from a timer on the worker's event loop: a loop that is stuck sends none. */
  | { readonly type: 'switchboard:heartbeat' }
  | { readonly type: 'switchboard:applied'; readonly version: string; readonly errors: readonly string[]; readonly listening: boolean }
  | { readonly type: 'switchboard:metrics-response'; readonly requestId: number; readonly metrics: readonly object[] };

export function isFromWorker(message: unknown): message is FromWorker {
  return typeof message === 'object' && message !== null && typeof (message as { type?: unknown }).type === 'string' && (message as { type: string }).type.startsWith('switchboard:');
}

export function isToWorker(message: unknown): message is ToWorker {
  return isFromWorker(message);
}
