/**
 * Chart render tests: chart/ rendered with Go's text/template + sprig (render.go) for the default
 * values and for one non-default value of every key of values.yaml; every rendered object is
 * checked against the Kubernetes model types (kube-schema.ts), and every key must change the output
 * it should (a row's probe gives `expected` with the key set, and something else without it).
 */
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { coalesce, defaultValues, find, GO_SKIP, renderChart, type Rendered } from './render.ts';
import { validateObject } from './kube-schema.ts';

type Json = Record<string, unknown>;

/** `a.b.0.c` into nested objects and lists; undefined when absent. */
function get(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Json)[part];
  }
  return v;
}

const deployment = (r: Rendered) => find(r, 'Deployment');
const pod = (r: Rendered, path: string) => get(deployment(r), `spec.template.spec.${path}`);
const container = (r: Rendered, path: string) => get(deployment(r), `spec.template.spec.containers.0.${path}`);
const env = (r: Rendered, name: string) => (container(r, 'env') as Json[]).find((e) => e.name === name)?.value;
const args = (r: Rendered) => container(r, 'args') as string[];
const service = (r: Rendered, path: string) => get(find(r, 'Service'), path);
const kinds = (r: Rendered) => r.objects.map((o) => `${String(o.kind)}/${String(get(o, 'metadata.name'))}`).sort();

function assertValid(r: Rendered): void {
  const problems = r.objects.flatMap((o) => validateObject(o));
  assert.deepEqual(problems, [], problems.join('\n'));
}

interface Row {
  /** The values.yaml key (dotted) this row proves. */
  key: string;
  values: Json;
  /** Values under both renders (e.g. monitoring.enabled for monitoring's sub-keys). */
  base?: Json;
  probe: (r: Rendered) => unknown;
  expected: unknown;
}

const ROWS: Row[] = [
  { key: 'nameOverride', values: { nameOverride: 'edge' }, probe: (r) => get(deployment(r), 'metadata.name'), expected: 'sb-edge' },
  { key: 'fullnameOverride', values: { fullnameOverride: 'gateway-ctl' }, probe: (r) => [get(deployment(r), 'metadata.name'), env(r, 'SWITCHBOARD_SERVICE_NAME')], expected: ['gateway-ctl', 'gateway-ctl'] },
  { key: 'commonLabels', values: { commonLabels: { team: 'ai' } }, probe: (r) => r.objects.every((o) => get(o, 'metadata.labels.team') === 'ai'), expected: true },
  { key: 'image.registry', values: { image: { registry: 'reg.example/ai' } }, probe: (r) => container(r, 'image'), expected: 'reg.example/ai/switchboard:0.1.0' },
  { key: 'image.tag', values: { image: { tag: '1.2.3' } }, probe: (r) => [container(r, 'image'), env(r, 'SWITCHBOARD_PROXY_IMAGE')], expected: ['ghcr.io/switchboard-dev/switchboard:1.2.3', 'ghcr.io/switchboard-dev/switchboard:1.2.3'] },
  { key: 'image.pullPolicy', values: { image: { pullPolicy: 'Always' } }, probe: (r) => container(r, 'imagePullPolicy'), expected: 'Always' },
  { key: 'imagePullSecrets', values: { imagePullSecrets: [{ name: 'regcred' }] }, probe: (r) => [pod(r, 'imagePullSecrets'), get(find(r, 'ServiceAccount'), 'imagePullSecrets')], expected: [[{ name: 'regcred' }], [{ name: 'regcred' }]] },
  { key: 'serviceAccount.create', values: { serviceAccount: { create: false } }, probe: (r) => [find(r, 'ServiceAccount'), pod(r, 'serviceAccountName')], expected: [undefined, 'default'] },
  { key: 'serviceAccount.name', values: { serviceAccount: { name: 'ctl' } }, probe: (r) => [get(find(r, 'ServiceAccount'), 'metadata.name'), pod(r, 'serviceAccountName'), get(find(r, 'ClusterRoleBinding'), 'subjects.0.name')], expected: ['ctl', 'ctl', 'ctl'] },
  { key: 'serviceAccount.annotations', values: { serviceAccount: { annotations: { 'iam.example/role': 'r' } } }, probe: (r) => get(find(r, 'ServiceAccount'), 'metadata.annotations'), expected: { 'iam.example/role': 'r' } },
  { key: 'controllerName', values: { controllerName: 'example.com/gw' }, probe: (r) => [get(find(r, 'GatewayClass'), 'spec.controllerName'), env(r, 'CONTROLLER_NAME')], expected: ['example.com/gw', 'example.com/gw'] },
  { key: 'gatewayClassName', values: { gatewayClassName: 'ai' }, probe: (r) => [get(find(r, 'GatewayClass'), 'metadata.name'), env(r, 'SWITCHBOARD_GATEWAY_CLASS_NAME')], expected: ['ai', 'ai'] },
  {
    key: 'gatewayClassParametersRefs',
    values: { gatewayClassParametersRefs: { switchboard: { name: 'defaults', namespace: 'ops' }, batch: { name: 'batch-params' } } },
    probe: (r) => r.objects.filter((o) => o.kind === 'GatewayClass').map((o) => [get(o, 'metadata.name'), get(o, 'spec.parametersRef')]),
    expected: [
      ['switchboard', { group: 'switchboard.dev', kind: 'ProxyParameters', name: 'defaults', namespace: 'ops' }],
      ['batch', { group: 'switchboard.dev', kind: 'ProxyParameters', name: 'batch-params' }],
    ],
  },
  {
    key: 'discoveryNamespaceSelectors',
    values: { discoveryNamespaceSelectors: [{ matchLabels: { team: 'ai' } }] },
    probe: (r) => args(r).find((a) => a.startsWith('--discovery-namespace-selectors=')),
    expected: '--discovery-namespace-selectors=[{"matchLabels":{"team":"ai"}}]',
  },
  {
    key: 'proxyModels.enabled', values: { proxyModels: { enabled: true } },
    probe: (r) => env(r, 'SWITCHBOARD_PROXY_MODELS_ENABLED'),
    expected: 'true',
  },
  { key: 'inferenceExtension.enabled', values: { inferenceExtension: { enabled: true } }, probe: (r) => env(r, 'SWITCHBOARD_INFERENCE_EXTENSION_ENABLED'), expected: 'true' },
  { key: 'istio.autoEnabled', values: { istio: { autoEnabled: true } }, probe: (r) => env(r, 'SWITCHBOARD_ISTIO_AUTO_ENABLED'), expected: 'true' },
  { key: 'istio.caAddress', values: { istio: { caAddress: 'istiod.istio-system.svc:15012' } }, probe: (r) => env(r, 'SWITCHBOARD_ISTIO_CA_ADDRESS'), expected: 'istiod.istio-system.svc:15012' },
  { key: 'istio.clusterId', values: { istio: { clusterId: 'east' } }, probe: (r) => env(r, 'SWITCHBOARD_ISTIO_CLUSTER_ID'), expected: 'east' },
  { key: 'istio.namespace', values: { istio: { namespace: 'mesh' } }, probe: (r) => env(r, 'SWITCHBOARD_ISTIO_NAMESPACE'), expected: 'mesh' },
  { key: 'istio.network', values: { istio: { network: 'net1' } }, probe: (r) => env(r, 'SWITCHBOARD_ISTIO_NETWORK'), expected: 'net1' },
  { key: 'istio.revision', values: { istio: { revision: 'canary' } }, probe: (r) => env(r, 'SWITCHBOARD_ISTIO_REVISION'), expected: 'canary' },
  { key: 'proxy.image.registry', values: { proxy: { image: { registry: 'mirror.example' } } }, probe: (r) => env(r, 'SWITCHBOARD_PROXY_IMAGE'), expected: 'mirror.example/switchboard:0.1.0' },
  { key: 'proxy.image.repository', values: { proxy: { image: { repository: 'sb-proxy' } } }, probe: (r) => env(r, 'SWITCHBOARD_PROXY_IMAGE'), expected: 'ghcr.io/switchboard-dev/sb-proxy:0.1.0' },
  { key: 'proxy.image.tag', values: { proxy: { image: { tag: '9.9.9' } } }, probe: (r) => [env(r, 'SWITCHBOARD_PROXY_IMAGE'), env(r, 'SWITCHBOARD_PROXY_IMAGE_TAG'), container(r, 'image')], expected: ['ghcr.io/switchboard-dev/switchboard:9.9.9', '9.9.9', 'ghcr.io/switchboard-dev/switchboard:0.1.0'] },
  { key: 'deploymentAnnotations', values: { deploymentAnnotations: { owner: 'ai' } }, probe: (r) => get(deployment(r), 'metadata.annotations'), expected: { owner: 'ai' } },
  { key: 'podAnnotations', values: { podAnnotations: { 'prometheus.io/scrape': null, note: 'x' } }, probe: (r) => get(deployment(r), 'spec.template.metadata.annotations'), expected: { 'prometheus.io/port': '9092', note: 'x' } },
  { key: 'podLabels', values: { podLabels: { tier: 'edge' } }, probe: (r) => get(deployment(r), 'spec.template.metadata.labels.tier'), expected: 'edge' },
  { key: 'affinity', values: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } } }, probe: (r) => get(pod(r, 'affinity'), 'nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchExpressions.0.key'), expected: 'zone' },
  { key: 'nodeSelector', values: { nodeSelector: { 'kubernetes.io/os': 'linux' } }, probe: (r) => pod(r, 'nodeSelector'), expected: { 'kubernetes.io/os': 'linux' } },
  { key: 'tolerations', values: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ai', effect: 'NoSchedule' }] }, probe: (r) => pod(r, 'tolerations'), expected: [{ key: 'dedicated', operator: 'Equal', value: 'ai', effect: 'NoSchedule' }] },
  { key: 'podSecurityContext', values: { podSecurityContext: { runAsNonRoot: true, fsGroup: 1000 } }, probe: (r) => pod(r, 'securityContext'), expected: { runAsNonRoot: true, fsGroup: 1000 } },
  { key: 'securityContext', values: { securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false } }, probe: (r) => container(r, 'securityContext'), expected: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false } },
  { key: 'dnsConfig', values: { dnsConfig: { options: [{ name: 'ndots', value: '2' }] } }, probe: (r) => pod(r, 'dnsConfig'), expected: { options: [{ name: 'ndots', value: '2' }] } },
  { key: 'resources', values: { resources: { requests: { cpu: '250m' }, limits: { memory: '512Mi' } } }, probe: (r) => container(r, 'resources'), expected: { requests: { cpu: '250m', memory: '128Mi' }, limits: { memory: '512Mi' } } },
  { key: 'controller.replicaCount', values: { controller: { replicaCount: 3 } }, probe: (r) => get(deployment(r), 'spec.replicas'), expected: 3 },
  { key: 'controller.logLevel', values: { controller: { logLevel: 'debug' } }, probe: (r) => args(r).includes('--log-level=debug'), expected: true },
  { key: 'controller.image.registry', values: { controller: { image: { registry: 'own.example' } } }, probe: (r) => [container(r, 'image'), env(r, 'SWITCHBOARD_PROXY_IMAGE')], expected: ['own.example/switchboard:0.1.0', 'ghcr.io/switchboard-dev/switchboard:0.1.0'] },
  { key: 'controller.image.repository', values: { controller: { image: { repository: 'sb-controller' } } }, probe: (r) => container(r, 'image'), expected: 'ghcr.io/switchboard-dev/sb-controller:0.1.0' },
  { key: 'controller.image.tag', values: { controller: { image: { tag: '2.0.0' } } }, probe: (r) => container(r, 'image'), expected: 'ghcr.io/switchboard-dev/switchboard:2.0.0' },
  { key: 'controller.image.pullPolicy', values: { controller: { image: { pullPolicy: 'Never' } } }, probe: (r) => container(r, 'imagePullPolicy'), expected: 'Never' },
  { key: 'controller.extraContainers', values: { controller: { extraContainers: [{ name: 'sidecar', image: 'busybox' }] } }, probe: (r) => pod(r, 'containers.1'), expected: { name: 'sidecar', image: 'busybox' } },
  { key: 'controller.extraVolumes', values: { controller: { extraVolumes: [{ name: 'extra', emptyDir: {} }] } }, probe: (r) => pod(r, 'volumes.1'), expected: { name: 'extra', emptyDir: {} } },
  { key: 'controller.extraVolumeMounts', values: { controller: { extraVolumeMounts: [{ name: 'extra', mountPath: '/extra' }] } }, probe: (r) => container(r, 'volumeMounts.1'), expected: { name: 'extra', mountPath: '/extra' } },
  {
    key: 'controller.extraEnv',
    values: { controller: { extraEnv: { PLAIN: 7, TOKEN: { valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }, SHORT: { configMapKeyRef: { name: 'c', key: 'k' } } } } },
    probe: (r) => (container(r, 'env') as Json[]).filter((e) => ['PLAIN', 'TOKEN', 'SHORT'].includes(e.name as string)),
    expected: [
      { name: 'PLAIN', value: '7' },
      { name: 'SHORT', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } },
      { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
    ],
  },
  {
    key: 'controller.horizontalPodAutoscaler', values: { controller: { horizontalPodAutoscaler: { minReplicas: 2, maxReplicas: 4 } } },
    probe: (r) => [get(find(r, 'HorizontalPodAutoscaler'), 'spec'), get(deployment(r), 'spec.replicas')],
    expected: [{ scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sb-switchboard' }, minReplicas: 2, maxReplicas: 4 }, undefined],
  },
  { key: 'controller.verticalPodAutoscaler', values: { controller: { verticalPodAutoscaler: { updatePolicy: { updateMode: 'Auto' } } } }, probe: (r) => get(find(r, 'VerticalPodAutoscaler'), 'spec'), expected: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sb-switchboard' }, updatePolicy: { updateMode: 'Auto' } } },
  { key: 'controller.podDisruptionBudget', values: { controller: { podDisruptionBudget: { minAvailable: 1 } } }, probe: (r) => get(find(r, 'PodDisruptionBudget'), 'spec.minAvailable'), expected: 1 },
  { key: 'controller.strategy', values: { controller: { strategy: { type: 'Recreate' } } }, probe: (r) => get(deployment(r), 'spec.strategy'), expected: { type: 'Recreate' } },
  { key: 'controller.priorityClassName', values: { controller: { priorityClassName: 'system-cluster-critical' } }, probe: (r) => pod(r, 'priorityClassName'), expected: 'system-cluster-critical' },
  { key: 'controller.revisionHistoryLimit', values: { controller: { revisionHistoryLimit: 0 } }, probe: (r) => get(deployment(r), 'spec.revisionHistoryLimit'), expected: 0 },
  {
    key: 'controller.xds.mode', values: { controller: { xds: { mode: 'plaintext' } } },
    probe: (r) => [args(r).filter((a) => a.startsWith('--xds-')), find(r, 'Secret'), pod(r, 'volumes'), env(r, 'SWITCHBOARD_PROXY_CONTROLLER_URL')],
    expected: [['--xds-mode=plaintext', '--xds-address=0.0.0.0:9978'], undefined, undefined, 'http://sb-switchboard.switchboard-system.svc:9978'],
  },
  { key: 'controller.xds.tls.secretName', values: { controller: { xds: { tls: { secretName: 'my-xds-cert' } } } }, probe: (r) => [find(r, 'Secret'), pod(r, 'volumes.0.secret.secretName')], expected: [undefined, 'my-xds-cert'] },
  { key: 'controller.service.enabled', values: { controller: { service: { enabled: false } } }, probe: (r) => find(r, 'Service'), expected: undefined },
  { key: 'controller.service.type', values: { controller: { service: { type: 'LoadBalancer' } } }, probe: (r) => service(r, 'spec.type'), expected: 'LoadBalancer' },
  { key: 'controller.service.ports.agwGrpc', values: { controller: { service: { ports: { agwGrpc: 15010 } } } }, probe: (r) => [service(r, 'spec.ports.0.port'), container(r, 'ports.0.containerPort'), args(r).includes('--xds-address=0.0.0.0:15010')], expected: [15010, 15010, true] },
  { key: 'controller.service.ports.health', values: { controller: { service: { ports: { health: 8081 } } } }, probe: (r) => [service(r, 'spec.ports.1.port'), args(r).includes('--health-address=0.0.0.0:8081')], expected: [8081, true] },
  { key: 'controller.service.ports.metrics', values: { controller: { service: { ports: { metrics: 8080 } } } }, probe: (r) => [service(r, 'spec.ports.2.port'), args(r).includes('--metrics-address=0.0.0.0:8080')], expected: [8080, true] },
  { key: 'controller.service.publishNotReadyAddresses', values: { controller: { service: { publishNotReadyAddresses: true } } }, probe: (r) => service(r, 'spec.publishNotReadyAddresses'), expected: true },
  { key: 'controller.service.annotations', values: { controller: { service: { annotations: { a: 'b' } } } }, probe: (r) => service(r, 'metadata.annotations'), expected: { a: 'b' } },
  { key: 'controller.service.extraLabels', values: { controller: { service: { extraLabels: { exposed: 'yes' } } } }, probe: (r) => service(r, 'metadata.labels.exposed'), expected: 'yes' },
  { key: 'controller.service.clusterIP', values: { controller: { service: { clusterIP: 'None' } } }, probe: (r) => service(r, 'spec.clusterIP'), expected: 'None' },
  { key: 'controller.service.clusterIPs', values: { controller: { service: { clusterIPs: ['10.0.0.9'] } } }, probe: (r) => service(r, 'spec.clusterIPs'), expected: ['10.0.0.9'] },
  { key: 'controller.service.externalIPs', values: { controller: { service: { externalIPs: ['192.0.2.1'] } } }, probe: (r) => service(r, 'spec.externalIPs'), expected: ['192.0.2.1'] },
  { key: 'controller.service.externalName', values: { controller: { service: { type: 'ExternalName', externalName: 'ctl.example' } } }, probe: (r) => [service(r, 'spec.externalName'), service(r, 'spec.ports')], expected: ['ctl.example', undefined] },
  { key: 'controller.service.externalTrafficPolicy', values: { controller: { service: { externalTrafficPolicy: 'Local' } } }, probe: (r) => service(r, 'spec.externalTrafficPolicy'), expected: 'Local' },
  { key: 'controller.service.healthCheckNodePort', values: { controller: { service: { healthCheckNodePort: 32000 } } }, probe: (r) => service(r, 'spec.healthCheckNodePort'), expected: 32000 },
  { key: 'controller.service.internalTrafficPolicy', values: { controller: { service: { internalTrafficPolicy: 'Local' } } }, probe: (r) => service(r, 'spec.internalTrafficPolicy'), expected: 'Local' },
  { key: 'controller.service.ipFamilies', values: { controller: { service: { ipFamilies: ['IPv6'] } } }, probe: (r) => service(r, 'spec.ipFamilies'), expected: ['IPv6'] },
  { key: 'controller.service.ipFamilyPolicy', values: { controller: { service: { ipFamilyPolicy: 'PreferDualStack' } } }, probe: (r) => service(r, 'spec.ipFamilyPolicy'), expected: 'PreferDualStack' },
  { key: 'controller.service.loadBalancerClass', values: { controller: { service: { loadBalancerClass: 'example.com/lb' } } }, probe: (r) => service(r, 'spec.loadBalancerClass'), expected: 'example.com/lb' },
  { key: 'controller.service.loadBalancerIP', values: { controller: { service: { loadBalancerIP: '198.51.100.7' } } }, probe: (r) => service(r, 'spec.loadBalancerIP'), expected: '198.51.100.7' },
  { key: 'controller.service.loadBalancerSourceRanges', values: { controller: { service: { loadBalancerSourceRanges: ['10.0.0.0/8'] } } }, probe: (r) => service(r, 'spec.loadBalancerSourceRanges'), expected: ['10.0.0.0/8'] },
  { key: 'controller.service.allocateLoadBalancerNodePorts', values: { controller: { service: { allocateLoadBalancerNodePorts: false } } }, probe: (r) => service(r, 'spec.allocateLoadBalancerNodePorts'), expected: false },
  { key: 'controller.service.sessionAffinity', values: { controller: { service: { sessionAffinity: 'ClientIP' } } }, probe: (r) => service(r, 'spec.sessionAffinity'), expected: 'ClientIP' },
  { key: 'controller.service.sessionAffinityConfig', values: { controller: { service: { sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } } } }, probe: (r) => service(r, 'spec.sessionAffinityConfig'), expected: { clientIP: { timeoutSeconds: 60 } } },
  { key: 'controller.service.trafficDistribution', values: { controller: { service: { trafficDistribution: 'PreferClose' } } }, probe: (r) => service(r, 'spec.trafficDistribution'), expected: 'PreferClose' },
  { key: 'monitoring.enabled', values: { monitoring: { enabled: true } }, probe: (r) => kinds(r).filter((k) => /Monitor|ConfigMap/.test(k)), expected: ['ConfigMap/sb-switchboard-dashboard', 'PodMonitor/sb-switchboard-proxies', 'ServiceMonitor/sb-switchboard'] },
  { key: 'monitoring.grafanaDashboard.enabled', base: { monitoring: { enabled: true } }, values: { monitoring: { grafanaDashboard: { enabled: false } } }, probe: (r) => find(r, 'ConfigMap'), expected: undefined },
  { key: 'monitoring.grafanaDashboard.labels', base: { monitoring: { enabled: true } }, values: { monitoring: { grafanaDashboard: { labels: { grafana_dashboard: null, dashboards: 'ai' } } } }, probe: (r) => [get(find(r, 'ConfigMap'), 'metadata.labels.dashboards'), get(find(r, 'ConfigMap'), 'metadata.labels.grafana_dashboard')], expected: ['ai', undefined] },
  { key: 'monitoring.proxy.gatewayClassNames', base: { monitoring: { enabled: true } }, values: { monitoring: { proxy: { gatewayClassNames: ['a', 'b'] } } }, probe: (r) => get(find(r, 'PodMonitor'), 'spec.selector.matchExpressions.0.values'), expected: ['a', 'b'] },
  { key: 'monitoring.proxy.namespaceSelector', base: { monitoring: { enabled: true } }, values: { monitoring: { proxy: { namespaceSelector: { matchNames: ['ai'] } } } }, probe: (r) => get(find(r, 'PodMonitor'), 'spec.namespaceSelector'), expected: { matchNames: ['ai'] } },
  { key: 'monitoring.proxy.podMonitor.enabled', base: { monitoring: { enabled: true } }, values: { monitoring: { proxy: { podMonitor: { enabled: false } } } }, probe: (r) => find(r, 'PodMonitor'), expected: undefined },
  { key: 'monitoring.serviceMonitor.enabled', base: { monitoring: { enabled: true } }, values: { monitoring: { serviceMonitor: { enabled: false } } }, probe: (r) => find(r, 'ServiceMonitor'), expected: undefined },
  { key: 'monitoring.serviceMonitor.extraLabels', base: { monitoring: { enabled: true } }, values: { monitoring: { serviceMonitor: { extraLabels: { release: 'prom' } } } }, probe: (r) => get(find(r, 'ServiceMonitor'), 'metadata.labels.release'), expected: 'prom' },
  { key: 'monitoring.serviceMonitor.interval', base: { monitoring: { enabled: true } }, values: { monitoring: { serviceMonitor: { interval: '30s' } } }, probe: (r) => [get(find(r, 'ServiceMonitor'), 'spec.endpoints.0.interval'), get(find(r, 'PodMonitor'), 'spec.podMetricsEndpoints.0.interval')], expected: ['30s', '30s'] },
];

/** Dotted paths of values.yaml's leaves (a map's keys; a list or empty map is one leaf). */
function leaves(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length === 0) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
}

describe('chart render (Go text/template + sprig)', { skip: GO_SKIP }, () => {
  it('renders the default values into valid objects: the controller and what it needs, nothing optional', () => {
    const r = renderChart();
    assertValid(r);
    assert.deepEqual(kinds(r), [
      'ClusterRole/sb-switchboard', 'ClusterRoleBinding/sb-switchboard', 'Deployment/sb-switchboard', 'GatewayClass/switchboard',
      'Role/sb-switchboard-leader-election', 'RoleBinding/sb-switchboard-leader-election', 'Secret/sb-switchboard-xds-tls',
      'Service/sb-switchboard', 'ServiceAccount/sb-switchboard',
    ]);
    assert.deepEqual(args(r), [
      'controller', '--xds-mode=tls', '--xds-address=0.0.0.0:9978', '--health-address=0.0.0.0:9093', '--metrics-address=0.0.0.0:9092',
      '--log-level=info', '--log-format=json', '--discovery-namespace-selectors=[]',
      '--xds-cert-file=/etc/switchboard/xds-tls/tls.crt', '--xds-key-file=/etc/switchboard/xds-tls/tls.key',
    ]);
    assert.deepEqual((service(r, 'spec.ports') as Json[]).map((p) => [p.name, p.port]), [['agw-grpc', 9978], ['health', 9093], ['metrics', 9092]]);
  });

  it('gives the controller the RBAC docs/kubernetes.md lists, and provisioning rights', () => {
    const rules = get(find(renderChart(), 'ClusterRole'), 'rules') as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const can = (group: string, resource: string, verb: string) => rules.some((x) => x.apiGroups.includes(group) && x.resources.includes(resource) && x.verbs.includes(verb));
    for (const [group, resource, verb] of [
      ['gateway.networking.k8s.io', 'gateways', 'watch'], ['gateway.networking.k8s.io', 'gateways/status', 'patch'],
      ['switchboard.dev', 'proxyparameters', 'list'], ['discovery.k8s.io', 'endpointslices', 'watch'], ['', 'secrets', 'create'],
      ['authentication.k8s.io', 'tokenreviews', 'create'], ['apps', 'deployments', 'patch'], ['apps', 'daemonsets', 'delete'],
      ['', 'serviceaccounts', 'create'], ['policy', 'poddisruptionbudgets', 'patch'], ['autoscaling', 'horizontalpodautoscalers', 'delete'],
    ]) assert.ok(can(group, resource, verb), `${verb} ${group}/${resource}`);
    // Always: the ProxyModel CRD is always installed, and a 403 on its list would keep the controller not ready.
    assert.ok(can('switchboard.dev', 'proxymodels', 'watch') && can('switchboard.dev', 'proxymodels/status', 'patch'));
  });

  it('generates an xDS certificate for the Service names when no Secret is named', () => {
    const data = get(find(renderChart(), 'Secret'), 'data') as Record<string, string>;
    const cert = new X509Certificate(Buffer.from(data['tls.crt'], 'base64'));
    const ca = new X509Certificate(Buffer.from(data['ca.crt'], 'base64'));
    assert.ok(createPrivateKey(Buffer.from(data['tls.key'], 'base64').toString()).asymmetricKeyType === 'ec');
    assert.ok(cert.checkIssued(ca));
    assert.match(cert.subjectAltName ?? '', /DNS:sb-switchboard\.switchboard-system\.svc\b/);
  });

  it('has a row below for every key of values.yaml', () => {
    const covered = new Set(ROWS.map((row) => row.key));
    const missing = leaves(defaultValues()).filter((leaf) => ![...covered].some((key) => leaf === key || leaf.startsWith(`${key}.`)));
    assert.deepEqual(missing, []);
  });

  it('fails the render when a gatewayClassParametersRefs entry has no name', () => {
    assert.throws(() => renderChart({ gatewayClassParametersRefs: { switchboard: { namespace: 'ops' } } }), /gatewayClassParametersRefs\.switchboard\.name is required/);
  });

  describe('every key changes the output it should', () => {
    for (const row of ROWS) {
      it(row.key, () => {
        const before = renderChart(row.base ?? {});
        const after = renderChart(coalesce(row.base ?? {}, row.values) as Json);
        assertValid(after);
        assert.deepEqual(row.probe(after), row.expected);
        assert.notDeepEqual(row.probe(before), row.expected, 'the default already gives this: the row proves nothing');
      });
    }
  });
});
