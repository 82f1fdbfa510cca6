import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { LogFilterError, parseLogFilter, type LogFilter } from '../../common/log-filter.ts';
import { parseListenAddress, type ListenAddress } from '../../embedded/address.ts';
import { DEFAULT_METRICS_ADDRESS, LOG_LEVELS, UsageError, type LogFormat, type LogLevel } from '../args.ts';

/** Where Kubernetes mounts a pod's ServiceAccount token and namespace (projected volume). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
export const DEFAULT_TOKEN_FILE = `${SERVICE_ACCOUNT_DIR}/token`;

export interface ProxyOptions {
  /** `http://…` for plaintext, `https://…` for TLS (the controller's `controller.xds.mode`). */
  readonly controller: string;
  readonly namespace: string;
  readonly gateways: readonly string[];
  readonly proxyId: string;
  readonly tokenFile: string;
  readonly caFile: string | undefined;
  readonly serverName: string | undefined;
  readonly metricsAddress: ListenAddress;
  /** The address the config's listeners bind on (every interface by default). */
  readonly bindAddress: string;
  readonly logLevel: LogLevel;
  /** Per-module levels (ProxyParameters logging.level `warn,mcp=debug`). */
  readonly logFilter: LogFilter | undefined;
  readonly logFormat: LogFormat;
}

export const PROXY_HELP = `Usage: switchboard proxy --controller URL --gateway NAME [--gateway NAME…] [flags]

The data plane alone: takes the config of its Gateways from a "switchboard controller" over a gRPC
stream and serves it. Updates are applied without dropping connections; one the proxy cannot apply
is refused (NACK, shown on the Gateway's status) and the last good config keeps serving. While the
controller is away the proxy keeps serving and reconnects with backoff.

The proxy authenticates with its Kubernetes ServiceAccount token and is given only Gateways of its
ServiceAccount's namespace.

Flags (each also read from the environment variable named after it):
      --controller URL       http://HOST:9978 (plaintext) or https://HOST:9978 (tls)   SWITCHBOARD_CONTROLLER
      --gateway NAME         a Gateway this proxy serves; repeatable                  SWITCHBOARD_GATEWAYS (comma-separated)
      --namespace NS         the Gateways' namespace (default: the ServiceAccount's)  POD_NAMESPACE
      --proxy-id ID          this proxy's name in logs and status (default: host name) POD_NAME
      --token-file PATH      ServiceAccount token, re-read on every connection         SWITCHBOARD_TOKEN_FILE
                             (default ${DEFAULT_TOKEN_FILE})
      --ca-file PATH         CA bundle for the controller's certificate (https)        SWITCHBOARD_CA_FILE
      --server-name NAME     name the controller's certificate must carry              SWITCHBOARD_SERVER_NAME
      --metrics-address ADDR Prometheus /metrics and /healthz/ready (default ${DEFAULT_METRICS_ADDRESS})
      --bind-address HOST    where the Gateways' listeners bind (default 0.0.0.0)
      --log-level LEVEL      fatal, error, warn, info, debug, trace or silent (default info,
                             or the filter's level)
      --log-filter FILTER    levels per module: LEVEL,MODULE=LEVEL,… (modules: xds, mcp,  SWITCHBOARD_LOG_FILTER
                             llm, forward; e.g. warn,mcp=debug)
      --log-format FORMAT    text or json (default json)
  -h, --help                 show this help

SIGINT or SIGTERM drains in-flight requests and exits 0.
`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  controller: { type: 'string' },
  gateway: { type: 'string', multiple: true },
  namespace: { type: 'string' },
  'proxy-id': { type: 'string' },
  'token-file': { type: 'string' },
  'ca-file': { type: 'string' },
  'server-name': { type: 'string' },
  'metrics-address': { type: 'string', default: DEFAULT_METRICS_ADDRESS },
  'bind-address': { type: 'string', default: '0.0.0.0' },
  'log-level': { type: 'string' },
  'log-filter': { type: 'string' },
  'log-format': { type: 'string', default: 'json' },
} as const satisfies ParseArgsOptionsConfig;

/** `switchboard proxy …`; flags win over the environment. Returns 'help' for `--help`. */
export function parseProxyArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ProxyOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError('proxy', (err as Error).message.replace(/^Unknown option '([^']+)'.*$/s, 'unknown flag $1'));
  }
  if (values.help) return 'help';

  const controller = values.controller ?? env.SWITCHBOARD_CONTROLLER;
  if (!controller) throw new UsageError('proxy', '--controller URL is required (or SWITCHBOARD_CONTROLLER)');
  let url: URL;
  try {
    url = new URL(controller);
  } catch {
    throw new UsageError('proxy', `--controller must be a URL like https://switchboard.switchboard-system:9978, got "${controller}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('proxy', `--controller must start with http:// (plaintext) or https:// (tls), got "${controller}"`);

  const gateways = values.gateway ?? (env.SWITCHBOARD_GATEWAYS ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
  if (gateways.length === 0) throw new UsageError('proxy', 'at least one --gateway NAME is required (or SWITCHBOARD_GATEWAYS)');

  const namespace = values.namespace ?? env.POD_NAMESPACE ?? serviceAccountNamespace();
  if (!namespace) throw new UsageError('proxy', `--namespace is required outside a pod (or POD_NAMESPACE; in a pod it is read from ${SERVICE_ACCOUNT_DIR}/namespace)`);

  const filterText = values['log-filter'] ?? env.SWITCHBOARD_LOG_FILTER;
  let logFilter: LogFilter | undefined;
  try {
    logFilter = filterText !== undefined && filterText.trim() !== '' ? parseLogFilter(filterText) : undefined;
  } catch (err) {
    if (err instanceof LogFilterError) throw new UsageError('proxy', `--log-filter: ${err.message}`);
    throw err;
  }
  // --log-level wins over the filter's own level entry.
  const logLevel = values['log-level'] ?? logFilter?.level ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new UsageError('proxy', `--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const logFormat = values['log-format'];
  if (logFormat !== 'json' && logFormat !== 'text') throw new UsageError('proxy', `--log-format must be json or text, got "${logFormat}"`);

  let metricsAddress: ListenAddress;
  try {
    metricsAddress = parseListenAddress(values['metrics-address'], '--metrics-address');
  } catch (err) {
    throw new UsageError('proxy', (err as Error).message);
  }

  return {
    controller: url.origin,
    namespace,
    gateways,
    proxyId: values['proxy-id'] ?? env.POD_NAME ?? os.hostname(),
    tokenFile: values['token-file'] ?? env.SWITCHBOARD_TOKEN_FILE ?? DEFAULT_TOKEN_FILE,
    caFile: values['ca-file'] ?? env.SWITCHBOARD_CA_FILE,
    serverName: values['server-name'] ?? env.SWITCHBOARD_SERVER_NAME,
    metricsAddress,
    bindAddress: values['bind-address'],
    logLevel: logLevel as LogLevel,
    logFilter,
    logFormat,
  };
}

function serviceAccountNamespace(): string | undefined {
  const path = `${SERVICE_ACCOUNT_DIR}/namespace`;
  return existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined;
}
