/**
 * The proxy workload of one Gateway, as the objects the controller applies (docs/kubernetes.md
 * "Provisioning"): a Deployment or DaemonSet running `switchboard proxy`, its Service (one port
 * per distinct listener port), its ServiceAccount, and when asked a PodDisruptionBudget and a
 * HorizontalPodAutoscaler. Pure: the same Gateway and parameters give the same objects, which
 * the golden tests (test/kube/golden/provision/) pin down exactly.
 *
 * Order (SPEC.md "Overlay semantics"): typed fields of the GatewayClass's parameters, then the
 * Gateway's (later wins, field by field; `env` by name), then the GatewayClass's overlays, then
 * the Gateway's, each a strategic merge (strategic-merge.ts).
 */
import type { KubeObject } from '../../../api/gateway/object.ts';
import type { ProxyParametersSpec } from '../../../api/v1alpha1/parameters.ts';
import { parseLogFilter } from '../../../common/log-filter.ts';
import type { GatewayParameters } from './parameters.ts';
import type { RawConfig } from './raw-config.ts';
import { isMap, strategicMerge, type Json, type JsonMap } from './strategic-merge.ts';

export const FIELD_MANAGER = 'switchboard-provisioner';
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
/** The Gateway API's class label: the chart's PodMonitor selects proxy pods by it. */
export const GATEWAY_CLASS_LABEL = 'gateway.networking.k8s.io/gateway-class-name';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const DEFAULT_IMAGE = { registry: 'ghcr.io/switchboard-dev', repository: 'switchboard' } as const;
/** The proxy's /metrics and /healthz/ready port (SPEC.md: proxy pod metrics port 15020). */
export const PROXY_METRICS_PORT = 15020;
/** Where the projected ServiceAccount token the proxy authenticates with is mounted. */
export const TOKEN_DIR = '/var/run/secrets/switchboard';
export const CATALOG_DIR = '/etc/switchboard/model-catalog';
export const CONTROLLER_CA_DIR = '/etc/switchboard/controller-ca';
const CONTAINER = 'proxy';

export interface ProvisionContext {
  /** The URL proxies dial: `https://<service>.<namespace>.svc:9978` (tls) or `http://…` (plaintext). */
  readonly controllerUrl: string;
  /** The proxy image's tag when the parameters name none (the controller's own version). */
  readonly defaultTag: string;
  /** The proxy image's registry and repository when the parameters name none (else DEFAULT_IMAGE; an empty registry: none). */
  readonly defaultImage?: { readonly registry: string; readonly repository: string };
  /**
   * The CA (PEM) proxies verify the controller's certificate with (tls xDS): copied into a
   * ConfigMap `<gateway>-controller-ca` beside the workload (a pod cannot mount the controller
   * namespace's Secret) and given to the proxy as SWITCHBOARD_CA_FILE.
   */
  readonly controllerCaPem?: string;
  /**
   * The cluster's mesh (the chart's `istio.*`): defaults for `mesh` fields a ProxyParameters
   * leaves out, and with `autoEnabled` mesh on for every Gateway of `gatewayClassName` (the
   * chart's built-in class) whose parameters do not say `mesh.enabled: false`.
   */
  readonly mesh?: MeshDefaults;
}

export interface MeshDefaults {
  readonly autoEnabled: boolean;
  readonly gatewayClassName: string;
  readonly caAddress: string;
  readonly clusterId?: string;
  readonly network?: string;
}

type Spec = ProxyParametersSpec;
type OverlayField = 'deployment' | 'daemonSet' | 'service' | 'serviceAccount' | 'podDisruptionBudget' | 'horizontalPodAutoscaler';

/** Typed fields: GatewayClass level then Gateway level, later wins; `modelCatalog` only from the Gateway. */
export function effectiveTyped(parameters: GatewayParameters): Spec {
  const a = parameters.classLevel ?? {};
  const b = parameters.gatewayLevel ?? {};
  const out: Spec = {};
  const pick = <K extends keyof Spec>(key: K): void => {
    const value = b[key] ?? a[key];
    if (value !== undefined) out[key] = value;
  };
  for (const key of ['workload', 'resources', 'shutdown'] as const) pick(key);
  // rawConfig merges key by key too (raw-config.ts: its keys are independent settings).
  for (const key of ['logging', 'image', 'mesh', 'rawConfig'] as const) {
    if (a[key] !== undefined || b[key] !== undefined) (out as Record<string, unknown>)[key] = { ...a[key], ...b[key] };
  }
  if (a.env || b.env) out.env = mergeEnv(a.env ?? [], b.env ?? []);
  // SPEC.md: modelCatalog is effective only at Gateway level.
  if (b.modelCatalog) out.modelCatalog = b.modelCatalog;
  return out;
}

/** Every object to apply for `gateway`, in a stable order. */
export function provisionObjects(gateway: KubeObject, parameters: GatewayParameters, context: ProvisionContext, listenerSets: readonly KubeObject[] = []): JsonMap[] {
  const typed = effectiveTyped(parameters);
  const name = gateway.metadata.name;
  const namespace = gateway.metadata.namespace ?? 'default';
  const selector = { [GATEWAY_NAME_LABEL]: name };
  const gatewayClassName = String((gateway.spec as { gatewayClassName?: unknown } | undefined)?.gatewayClassName ?? '');
  const classLabel = classLabelOf(gatewayClassName);
  const meta = (extra: JsonMap = {}): JsonMap => ({
    name,
    namespace,
    labels: { [GATEWAY_NAME_LABEL]: name, ...classLabel, 'app.kubernetes.io/name': 'switchboard-proxy', 'app.kubernetes.io/instance': name, [MANAGED_BY_LABEL]: 'switchboard' },
    ownerReferences: [{ apiVersion: gateway.apiVersion, kind: 'Gateway', name, uid: gateway.metadata.uid ?? '', controller: true }],
    ...extra,
  });
  const overlaid = (field: OverlayField, object: JsonMap): JsonMap => applyOverlays(object, field, parameters);
  const isDaemonSet = typed.workload?.kind === 'DaemonSet';
  const wantsHpa = !isDaemonSet && [parameters.classLevel, parameters.gatewayLevel].some((p) => p?.horizontalPodAutoscaler !== undefined);
  const wantsPdb = [parameters.classLevel, parameters.gatewayLevel].some((p) => p?.podDisruptionBudget !== undefined);

  const ports = listenerPorts(gateway, listenerSets);
  const pod = podTemplate(name, gatewayClassName, classLabel, selector, typed, ports, context);
  const workload: JsonMap = isDaemonSet
    ? { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta(), spec: { selector: { matchLabels: selector }, template: pod } }
    // With an HPA the replica count is the HPA's: the controller does not apply one.
    : { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(), spec: { ...(wantsHpa ? {} : { replicas: 1 }), selector: { matchLabels: selector }, template: pod } };

  const objects: JsonMap[] = [
    ...(context.controllerCaPem !== undefined ? [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta({ name: controllerCaName(name) }), data: { 'ca.crt': context.controllerCaPem } }] : []),
    overlaid('serviceAccount', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta() }),
    overlaid(isDaemonSet ? 'daemonSet' : 'deployment', workload),
    overlaid('service', {
      apiVersion: 'v1', kind: 'Service', metadata: meta(),
      spec: { type: 'LoadBalancer', selector, ports: ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.port, protocol: 'TCP' })) },
    }),
  ];
  if (wantsPdb) objects.push(overlaid('podDisruptionBudget', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta(), spec: { selector: { matchLabels: selector } } }));
  if (wantsHpa) {
    objects.push(overlaid('horizontalPodAutoscaler', {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta(),
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name } },
    }));
  }
  return objects;
}

/**
 * The class label, when the class name is a valid label value (a GatewayClass name may be up to
 * 253 characters, a label value 63): a longer one is left out rather than failing the apply.
 */
function classLabelOf(gatewayClassName: string): JsonMap {
  return /^(?=.{1,63}$)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(gatewayClassName) ? { [GATEWAY_CLASS_LABEL]: gatewayClassName } : {};
}

/** The ConfigMap carrying the controller's CA to a Gateway's proxies. */
export function controllerCaName(gateway: string): string {
  return `${gateway}-controller-ca`;
}

/**
 * One Service/container port per distinct listener port, named after the first listener on it:
 * the Gateway's listeners, then those of the ListenerSets attached to it (listener-sets.ts).
 */
export function listenerPorts(gateway: KubeObject, listenerSets: readonly KubeObject[] = []): { name: string; port: number }[] {
  const listenersOf = (object: KubeObject): { name?: unknown; port?: unknown }[] => {
    const listeners = (object.spec as { listeners?: unknown } | undefined)?.listeners;
    return Array.isArray(listeners) ? listeners as { name?: unknown; port?: unknown }[] : [];
  };
  const seen = new Map<number, string>();
  for (const listener of [gateway, ...listenerSets].flatMap(listenersOf)) {
    if (typeof listener.port === 'number' && !seen.has(listener.port)) seen.set(listener.port, typeof listener.name === 'string' ? listener.name : `port-${listener.port}`);
  }
  return [...seen].sort((x, y) => x[0] - y[0]).map(([port, name]) => ({ name, port }));
}

function podTemplate(name: string, gatewayClassName: string, classLabel: JsonMap, selector: JsonMap, typed: Spec, ports: readonly { name: string; port: number }[], context: ProvisionContext): JsonMap {
  const image = typed.image ?? {};
  const defaults = context.defaultImage ?? DEFAULT_IMAGE;
  const registry = image.registry ?? defaults.registry;
  const reference = `${registry ? `${registry}/` : ''}${image.repository ?? defaults.repository}${image.digest ? `@${image.digest}` : `:${image.tag ?? context.defaultTag}`}`;
  const raw = (typed.rawConfig ?? {}) as RawConfig;
  const { level, filter, format } = logSettings(typed, raw);
  // rawConfig's shutdown applies when the typed field is absent (typed fields win).
  const shutdown = typed.shutdown ?? raw.shutdown;
  const volumes: JsonMap[] = [{
    name: 'switchboard-token',
    projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] },
  }];
  const mounts: JsonMap[] = [{ name: 'switchboard-token', mountPath: TOKEN_DIR, readOnly: true }];
  if (context.controllerCaPem !== undefined) {
    volumes.push({ name: 'controller-ca', configMap: { name: controllerCaName(name) } });
    mounts.push({ name: 'controller-ca', mountPath: CONTROLLER_CA_DIR, readOnly: true });
  }
  const catalogPaths: string[] = [];
  (typed.modelCatalog?.sources ?? []).forEach((source, i) => {
    const key = source.configMap.key ?? 'catalog.json';
    volumes.push({ name: `model-catalog-${i}`, configMap: { name: source.configMap.name, items: [{ key, path: key }] } });
    mounts.push({ name: `model-catalog-${i}`, mountPath: `${CATALOG_DIR}/${i}`, readOnly: true });
    catalogPaths.push(`${CATALOG_DIR}/${i}/${key}`);
  });

  const env: JsonMap[] = [
    { name: 'SWITCHBOARD_CONTROLLER', value: context.controllerUrl },
    { name: 'SWITCHBOARD_GATEWAYS', value: name },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'SWITCHBOARD_TOKEN_FILE', value: `${TOKEN_DIR}/token` },
    ...(context.controllerCaPem !== undefined ? [{ name: 'SWITCHBOARD_CA_FILE', value: `${CONTROLLER_CA_DIR}/ca.crt` }] : []),
    ...(raw.serverName !== undefined ? [{ name: 'SWITCHBOARD_SERVER_NAME', value: raw.serverName }] : []),
    { name: 'SWITCHBOARD_LOG_FILTER', value: filter },
    ...shutdownEnv(shutdown),
    ...meshEnv(typed, gatewayClassName, context.mesh),
    ...(catalogPaths.length > 0 ? [{ name: 'SWITCHBOARD_MODEL_CATALOG', value: catalogPaths.join(',') }] : []),
  ];
  const container: JsonMap = {
    name: CONTAINER,
    image: reference,
    ...(image.pullPolicy ? { imagePullPolicy: image.pullPolicy } : {}),
    args: ['proxy', '--metrics-address', `0.0.0.0:${PROXY_METRICS_PORT}`, '--log-level', level, '--log-format', format, ...(raw.bindAddress !== undefined ? ['--bind-address', raw.bindAddress] : [])],
    // Parameters' env overrides generated entries of the same name in place, others follow in order.
    env: mergeEnv(env as (JsonMap & { name: string })[], (typed.env ?? []) as (JsonMap & { name: string })[]) as Json[],
    ports: [...ports.map((p) => ({ name: p.name.slice(0, 15), containerPort: p.port, protocol: 'TCP' })), { name: 'metrics', containerPort: PROXY_METRICS_PORT, protocol: 'TCP' }],
    readinessProbe: { httpGet: { path: '/healthz/ready', port: PROXY_METRICS_PORT }, periodSeconds: 5 },
    ...(typed.resources ? { resources: typed.resources as JsonMap } : {}),
    volumeMounts: mounts,
  };
  return {
    metadata: { labels: { ...selector, ...classLabel, 'app.kubernetes.io/name': 'switchboard-proxy', 'app.kubernetes.io/instance': name } },
    spec: {
      serviceAccountName: name,
      // The proxy authenticates with its own projected token, not the automounted one.
      automountServiceAccountToken: false,
      ...(shutdown ? { terminationGracePeriodSeconds: shutdown.max } : {}),
      containers: [container],
      volumes,
    },
  };
}

/**
 * `logging.level` is a filter (`info`, `warn,mcp=debug`; src/common/log-filter.ts, checked
 * before this runs): its entry without `module=` is the process level given to `--log-level`;
 * the whole filter is SWITCHBOARD_LOG_FILTER, whose module entries the proxy applies.
 * rawConfig's `logging` fills in what the typed field leaves out.
 */
function logSettings(typed: Spec, raw: RawConfig): { level: string; filter: string; format: string } {
  const filter = typed.logging?.level ?? raw.logging?.level ?? 'info';
  return { level: parseLogFilter(filter).level ?? 'info', filter, format: typed.logging?.format ?? raw.logging?.format ?? 'text' };
}

function shutdownEnv(shutdown: { readonly min: number; readonly max: number } | undefined): JsonMap[] {
  if (!shutdown) return [];
  return [
    { name: 'CONNECTION_MIN_TERMINATION_DEADLINE', value: String(shutdown.min) },
    { name: 'TERMINATION_GRACE_PERIOD_SECONDS', value: String(shutdown.max) },
  ];
}

/** The mesh CA when neither the parameters nor the chart name one (SPEC.md: port 15012). */
export const DEFAULT_MESH_CA_ADDRESS = 'https://istiod.istio-system.svc:15012';

/**
 * `mesh`, in the proxy's environment as SPEC.md lists it: the parameters' fields, else the
 * cluster's (the chart's `istio.*`), else the built-in defaults. With the chart's
 * `istio.autoEnabled`, a Gateway of the built-in class has mesh on unless its parameters say
 * `enabled: false`.
 */
function meshEnv(typed: Spec, gatewayClassName: string, cluster: MeshDefaults | undefined): JsonMap[] {
  const mesh = typed.mesh;
  const enabled = mesh?.enabled ?? (cluster?.autoEnabled === true && cluster.gatewayClassName === gatewayClassName);
  if (!enabled) return mesh ? [{ name: 'MESH_ENABLED', value: 'false' }] : [];
  const trustDomain = mesh?.trustDomain ?? 'cluster.local';
  return [
    { name: 'MESH_ENABLED', value: 'true' },
    { name: 'MESH_CA_ADDRESS', value: mesh?.caAddress ?? cluster?.caAddress ?? DEFAULT_MESH_CA_ADDRESS },
    { name: 'MESH_TRUST_DOMAIN', value: trustDomain },
    // The local trust domain is always accepted.
    { name: 'MESH_ADDITIONAL_TRUST_DOMAINS', value: [...new Set([trustDomain, ...(mesh?.additionalTrustDomains ?? [])])].join(',') },
    { name: 'MESH_CLUSTER_ID', value: mesh?.clusterId ?? cluster?.clusterId ?? 'Kubernetes' },
    { name: 'MESH_NETWORK', value: mesh?.network ?? cluster?.network ?? '' },
  ];
}

/** `later` entries replace same-named `earlier` ones in place; new names are appended in order. */
function mergeEnv<T extends { name: string }>(earlier: readonly T[], later: readonly T[]): T[] {
  const out = [...earlier];
  for (const entry of later) {
    const index = out.findIndex((e) => e.name === entry.name);
    if (index >= 0) out[index] = entry;
    else out.push(entry);
  }
  return out;
}

function applyOverlays(object: JsonMap, field: OverlayField, parameters: GatewayParameters): JsonMap {
  let out = object;
  for (const level of [parameters.classLevel, parameters.gatewayLevel]) {
    const overlay = level?.[field];
    if (!overlay) continue;
    const metadata = out.metadata as JsonMap;
    out = {
      ...out,
      metadata: {
        ...metadata,
        labels: { ...(metadata.labels as JsonMap), ...(overlay.metadata?.labels ?? {}) },
        ...(overlay.metadata?.annotations ? { annotations: { ...(metadata.annotations as JsonMap | undefined), ...overlay.metadata.annotations } } : {}),
      },
    };
    if (isMap(overlay.spec)) out = { ...out, spec: strategicMerge(isMap(out.spec) ? out.spec : {}, overlay.spec as JsonMap, '.spec') };
  }
  return out;
}
