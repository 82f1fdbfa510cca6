import type { Registry } from 'prom-client';
import type { Logger } from '../common/logger.ts';
import { ProxyRuntime } from '../proxy/runtime.ts';
import type { ConfigRuntime } from './types.ts';

/** The data plane as distribution drives it, in this process or in a cluster worker. */
export function createProxyRuntime(deps: { logger: Logger; registry: Registry }): ConfigRuntime {
  return new ProxyRuntime({ logger: deps.logger, registry: deps.registry });
}
