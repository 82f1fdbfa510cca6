/** `switchboard controller` flags and help. */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { parseNamespaceSelectors, type LabelSelector } from '../../controller/kube/namespace-selector.ts';
import { DEFAULT_CONTROLLER_NAME } from '../../controller/translate/index.ts';
import { TRANSPORT_MODES, type TransportMode } from '../../distribute/remote/transport.ts';
import { parseListenAddress, type ListenAddress } from '../../embedded/address.ts';
import { CONTROLLER_LOG_MODULES, type LogFilter } from '../../common/log-filter.ts';
import { logLevels, UsageError, type LogFormat, type LogLevel } from '../args.ts';

export interface ControllerOptions {
  /** A kubeconfig file; absent: $KUBECONFIG, ~/.kube/config, then the in-cluster ServiceAccount. */
  readonly kubeconfig: string | undefined;
  readonly healthAddress: ListenAddress;
  readonly metricsAddress: ListenAddress;
  readonly adminAddress: ListenAddress;
  readonly xdsAddress: ListenAddress;
  readonly xdsMode: TransportMode;
  readonly xdsTls: { readonly certPem: string; readonly keyPem: string } | undefined;
  readonly controllerName: string;
  readonly namespaceSelectors: readonly LabelSelector[];
  readonly leaderElection: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly maxObjects: number;
  readonly logLevel: LogLevel;
  /** Per-module levels (`--log-filter` / SWITCHBOARD_LOG_FILTER; modules CONTROLLER_LOG_MODULES). */
  readonly logFilter: LogFilter | undefined;
  readonly logFormat: LogFormat;
  /** The experimental ProxyModel API (docs/models.md): `--enable-proxy-models`, or the chart's `SWITCHBOARD_PROXY_MODELS_ENABLED=true`. */
  readonly proxyModels: boolean;
}

export const DEFAULT_HEALTH_ADDRESS = '0.0.0.0:9093';
export const DEFAULT_CONTROLLER_METRICS_ADDRESS = '0.0.0.0:9092';
export const DEFAULT_CONTROLLER_ADMIN_ADDRESS = '127.0.0.1:15000';
export const DEFAULT_XDS_ADDRESS = '0.0.0.0:9978';
export const DEFAULT_LEASE_NAME = 'switchboard-controller';

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  kubeconfig: { type: 'string' },
  'health-address': { type: 'string', default: DEFAULT_HEALTH_ADDRESS },
  'metrics-address': { type: 'string', default: DEFAULT_CONTROLLER_METRICS_ADDRESS },
  'admin-address': { type: 'string', default: DEFAULT_CONTROLLER_ADMIN_ADDRESS },
  'xds-address': { type: 'string', default: DEFAULT_XDS_ADDRESS },
  'xds-mode': { type: 'string', default: 'tls' },
  'xds-cert-file': { type: 'string' },
  'xds-key-file': { type: 'string' },
  'controller-name': { type: 'string' },
  'discovery-namespace-selectors': { type: 'string', default: '[]' },
  'disable-leader-election': { type: 'boolean', default: false },
  'leader-election-namespace': { type: 'string' },
  'leader-election-id': { type: 'string', default: DEFAULT_LEASE_NAME },
  'max-objects': { type: 'string', default: '250000' },
  'log-level': { type: 'string' },
  'log-filter': { type: 'string' },
  'log-format': { type: 'string', default: 'text' },
  'enable-proxy-models': { type: 'boolean' },
} as const satisfies ParseArgsOptionsConfig;

const IN_CLUSTER_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** `switchboard controller …`; returns 'help' for `--help`. `env` is process.env (injected for tests). */
export function parseControllerArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ControllerOptions | 'help' {
  let values;
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError('controller', (err as Error).message.replace(/^Unknown option '([^']+)'.*$/s, 'unknown flag $1'));
  }
  if (values.help) return 'help';
  const fail = (message: string): never => { throw new UsageError('controller', message); };
  const { logLevel, logFilter } = logLevels('controller', values['log-level'], values['log-filter'], env, CONTROLLER_LOG_MODULES);
  const logFormat = values['log-format'];
  if (logFormat !== 'json' && logFormat !== 'text') fail(`--log-format must be json or text, got "${logFormat}"`);
  const xdsMode = values['xds-mode'];
  if (!(TRANSPORT_MODES as readonly string[]).includes(xdsMode)) fail(`--xds-mode must be one of ${TRANSPORT_MODES.join(', ')}, got "${xdsMode}"`);
  const certFile = values['xds-cert-file'];
  const keyFile = values['xds-key-file'];
  if (xdsMode !== 'plaintext' && (!certFile || !keyFile)) fail(`--xds-mode ${xdsMode} needs --xds-cert-file and --xds-key-file`);
  if ((certFile === undefined) !== (keyFile === undefined)) fail('--xds-cert-file and --xds-key-file go together');
  let namespaceSelectors: LabelSelector[] = [];
  try {
    namespaceSelectors = parseNamespaceSelectors(values['discovery-namespace-selectors']);
  } catch (err) {
    fail(`--discovery-namespace-selectors: ${(err as Error).message}`);
  }
  const proxyModelsEnv = env.SWITCHBOARD_PROXY_MODELS_ENABLED;
  // The chart writes the value quoted ("true"/"false"); anything else is a typo that must not silently turn the API off or on.
  if (proxyModelsEnv !== undefined && proxyModelsEnv !== '' && proxyModelsEnv !== 'true' && proxyModelsEnv !== 'false') fail(`SWITCHBOARD_PROXY_MODELS_ENABLED must be true or false, got "${proxyModelsEnv}"`);
  const maxObjects = Number(values['max-objects']);
  if (!/^\d+$/.test(values['max-objects']) || maxObjects < 1) fail(`--max-objects must be a whole number of at least 1, got "${values['max-objects']}"`);
  return {
    kubeconfig: values.kubeconfig,
    healthAddress: address(values['health-address'], '--health-address'),
    metricsAddress: address(values['metrics-address'], '--metrics-address'),
    adminAddress: address(values['admin-address'], '--admin-address'),
    xdsAddress: address(values['xds-address'], '--xds-address'),
    xdsMode: xdsMode as TransportMode,
    xdsTls: certFile && keyFile ? { certPem: readPem(certFile, '--xds-cert-file'), keyPem: readPem(keyFile, '--xds-key-file') } : undefined,
    controllerName: values['controller-name'] ?? env.CONTROLLER_NAME ?? DEFAULT_CONTROLLER_NAME,
    namespaceSelectors,
    leaderElection: !values['disable-leader-election'],
    leaseNamespace: values['leader-election-namespace'] ?? env.POD_NAMESPACE ?? inClusterNamespace() ?? 'default',
    leaseName: values['leader-election-id'],
    // The pod name plus a random suffix: a restarted pod must not pass for the holder it replaced.
    identity: `${env.POD_NAME ?? os.hostname()}_${Math.random().toString(36).slice(2, 10)}`,
    maxObjects,
    logLevel,
    logFilter,
    logFormat: logFormat as LogFormat,
    proxyModels: values['enable-proxy-models'] ?? proxyModelsEnv === 'true',
  };
}

function address(text: string, flag: string): ListenAddress {
  try {
    return parseListenAddress(text, flag);
  } catch (err) {
    throw new UsageError('controller', (err as Error).message);
  }
}

function readPem(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError('controller', `${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function inClusterNamespace(): string | undefined {
  try {
    return readFileSync(IN_CLUSTER_NAMESPACE_FILE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export const CONTROLLER_HELP = `Usage: switchboard controller [flags]

The Kubernetes control plane: watches Gateway API and switchboard.dev objects (plus the Services,
EndpointSlices, Secrets, ConfigMaps, ReferenceGrants and Namespaces they use), translates them like
"run" does, serves each proxy the config of its gateways over gRPC, and writes status back (the
leader replica only). See docs/kubernetes.md.

Flags:
      --kubeconfig PATH      kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then in-cluster)
      --health-address ADDR  readiness /healthz/ready and liveness /healthz/live (default ${DEFAULT_HEALTH_ADDRESS})
      --metrics-address ADDR Prometheus /metrics (default ${DEFAULT_CONTROLLER_METRICS_ADDRESS})
      --admin-address ADDR   /config_dump and /status (default ${DEFAULT_CONTROLLER_ADMIN_ADDRESS})
      --xds-address ADDR     config distribution to proxies, gRPC (default ${DEFAULT_XDS_ADDRESS})
      --xds-mode MODE        plaintext, tls or either (default tls)
      --xds-cert-file PATH   PEM certificate for tls and either
      --xds-key-file PATH    PEM key for tls and either
      --controller-name NAME GatewayClass controllerName served (default $CONTROLLER_NAME or ${DEFAULT_CONTROLLER_NAME})
      --discovery-namespace-selectors JSON
                             namespaces to read, a JSON list of label selectors OR-ed
                             (e.g. '[{"matchLabels":{"gateway":"on"}}]'; default [] = all)
      --disable-leader-election
                             write status without a leader Lease (one replica only)
      --leader-election-namespace NS
                             namespace of the leader Lease (default $POD_NAMESPACE, the in-cluster namespace, default)
      --leader-election-id NAME
                             name of the leader Lease (default ${DEFAULT_LEASE_NAME})
      --max-objects N        refuse to translate more watched objects than this (default 250000)
      --log-level LEVEL      fatal, error, warn, info, debug, trace or silent (default info,
                             or the filter's level)
      --log-filter FILTER    levels per module: LEVEL,MODULE=LEVEL,… (modules: kube, status,
                             provision, leader, xds; e.g. warn,kube=debug; default
                             $SWITCHBOARD_LOG_FILTER)
      --log-format FORMAT    text or json (default text)
      --enable-proxy-models  serve ProxyModel objects (experimental, docs/models.md; default
                             $SWITCHBOARD_PROXY_MODELS_ENABLED, the chart's proxyModels.enabled)
  -h, --help                 show this help

ADDR is HOST:PORT, [IPv6]:PORT or :PORT. SIGINT or SIGTERM releases the leader Lease and exits 0.
`;
