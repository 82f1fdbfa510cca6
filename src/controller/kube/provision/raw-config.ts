/**
 * `rawConfig` of a ProxyParameters: the proxy's own runtime settings, merged under the typed
 * fields (SPEC.md: "JSON object merged into the generated config; typed fields win"). The
 * generated config of a provisioned proxy is its command line and environment, so the merge is
 * done here and the result is what the pod runs with (visible on the Deployment):
 *
 * | rawConfig key      | becomes                                   | typed field that wins |
 * |--------------------|-------------------------------------------|-----------------------|
 * | `logging.level`    | `--log-level` / SWITCHBOARD_LOG_FILTER     | `logging.level`       |
 * | `logging.format`   | `--log-format`                             | `logging.format`      |
 * | `shutdown.min/max` | as the typed `shutdown` (env, grace period) | `shutdown`            |
 * | `bindAddress`      | `--bind-address` (where listeners bind)    | —                     |
 * | `serverName`       | SWITCHBOARD_SERVER_NAME (the name the controller's certificate must carry) | — |
 *
 * Anything else is refused with its path (`spec.rawConfig.foo`): the Gateway is not provisioned
 * and the ProxyParameters is `Accepted=False Invalid`, rather than a setting silently ignored.
 */
import { isIP } from 'node:net';
import type { ProxyParametersSpec } from '../../../api/v1alpha1/parameters.ts';
import { LogFilterError, parseLogFilter } from '../../../common/log-filter.ts';
import { isMap } from './strategic-merge.ts';

export interface RawConfig {
  readonly logging?: { readonly level?: string; readonly format?: 'json' | 'text' };
  readonly shutdown?: { readonly min: number; readonly max: number };
  readonly bindAddress?: string;
  readonly serverName?: string;
}

const MAX_SECONDS = 31_536_000;
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

type Check = (value: unknown, path: string) => string[];
const object = (fields: Record<string, Check>, required: readonly string[] = []): Check => (value, path) => {
  if (!isMap(value)) return [`${path}: must be an object`];
  const issues = Object.keys(value).filter((k) => !Object.hasOwn(fields, k)).map((k) => `${path}.${k}: unknown key (allowed: ${Object.keys(fields).join(', ')})`);
  for (const k of required) if (value[k] === undefined) issues.push(`${path}.${k}: required`);
  for (const [k, check] of Object.entries(fields)) if (value[k] !== undefined) issues.push(...check(value[k], `${path}.${k}`));
  return issues;
};
const seconds: Check = (value, path) => (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_SECONDS ? [] : [`${path}: must be an integer from 0 to ${MAX_SECONDS}`]);

const RAW_CONFIG: Check = object({
  logging: object({
    level: (value, path) => (typeof value === 'string' ? logFilterIssues(value, path) : [`${path}: must be a string`]),
    format: (value, path) => (value === 'json' || value === 'text' ? [] : [`${path}: must be json or text`]),
  }),
  shutdown: (value, path) => {
    const issues = object({ min: seconds, max: seconds }, ['min', 'max'])(value, path);
    if (issues.length === 0 && isMap(value) && (value.min as number) > (value.max as number)) issues.push(`${path}: min must not exceed max`);
    return issues;
  },
  bindAddress: (value, path) => (typeof value === 'string' && (isIP(value) !== 0 || DNS_NAME.test(value)) ? [] : [`${path}: must be an IP address or a host name`]),
  serverName: (value, path) => (typeof value === 'string' && DNS_NAME.test(value) ? [] : [`${path}: must be a DNS name`]),
});

/** Problems with a ProxyParameters' `rawConfig` and log filters, each named by its path. */
export function provisionIssues(spec: ProxyParametersSpec): string[] {
  return [
    ...(spec.logging?.level !== undefined ? logFilterIssues(spec.logging.level, 'spec.logging.level') : []),
    ...(spec.rawConfig !== undefined ? RAW_CONFIG(spec.rawConfig, 'spec.rawConfig') : []),
  ];
}

function logFilterIssues(filter: string, path: string): string[] {
  try {
    parseLogFilter(filter);
    return [];
  } catch (err) {
    if (err instanceof LogFilterError) return [`${path}: ${err.message}`];
    throw err;
  }
}
