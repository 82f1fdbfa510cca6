/**
 * The chart's values (chart/values.yaml) as a typebox schema, built with the same builders as the
 * CRDs (src/api/v1alpha1/schema/build.ts), so `helm install` refuses a misspelt or mistyped value
 * the way the API server refuses a bad ProxyPolicy. Written to chart/values.schema.json by
 * scripts/gen-chart-schema.ts (npm run gen:chart-schema); test/chart/values-schema.test.ts fails
 * when the file is stale. Objects this chart passes to Kubernetes as they are (affinity,
 * tolerations, securityContext, HPA spec, …) stay open: the API server validates them.
 */
import Type from 'typebox';
import { Bool, Int, JsonObject, List, MapOf, Obj, OneOf, Str } from '../src/api/v1alpha1/schema/build.ts';
import { LabelSelector } from '../src/api/v1alpha1/refs.ts';
import { LOG_LEVELS } from '../src/cli/args.ts';
import { TRANSPORT_MODES } from '../src/distribute/remote/transport.ts';

const Name = (max = 253) => Str(0, max);
const Labels = () => MapOf(Str(0, 63), { description: 'label name → value' });
const Annotations = () => MapOf(Type.String(), { description: 'annotation name → value' });
const Port = () => Int(1, 65535);
const KubeList = (description: string) => List(JsonObject(), { description });
/** A value whose default is null: optional too, since Helm may drop null keys before validating. */
const Nullable = <T extends ReturnType<typeof Int> | ReturnType<typeof Bool>>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Image = (description: string) => Obj({
  registry: Name(),
  repository: Name(),
  tag: Str(0, 128),
}, { description });

const ControllerImage = Obj({
  registry: Name(),
  repository: Name(),
  tag: Str(0, 128),
  pullPolicy: Type.Unsafe<string>({ type: 'string', enum: ['', 'Always', 'IfNotPresent', 'Never'] }),
}, { description: 'the controller image; "" falls back to image.*' });

const Service = Obj({
  enabled: Bool(),
  type: OneOf(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const),
  ports: Obj({ agwGrpc: Port(), health: Port(), metrics: Port() }),
  publishNotReadyAddresses: Bool(),
  annotations: Annotations(),
  extraLabels: Labels(),
  clusterIP: Str(0, 45),
  clusterIPs: List(Str(1, 45), { max: 2 }),
  externalIPs: List(Str(1, 45)),
  externalName: Name(),
  externalTrafficPolicy: Type.Unsafe<string>({ type: 'string', enum: ['', 'Cluster', 'Local'] }),
  healthCheckNodePort: Nullable(Int(1, 65535)),
  internalTrafficPolicy: Type.Unsafe<string>({ type: 'string', enum: ['', 'Cluster', 'Local'] }),
  ipFamilies: List(OneOf(['IPv4', 'IPv6'] as const), { max: 2 }),
  ipFamilyPolicy: Type.Unsafe<string>({ type: 'string', enum: ['', 'SingleStack', 'PreferDualStack', 'RequireDualStack'] }),
  loadBalancerClass: Name(),
  loadBalancerIP: Str(0, 45),
  loadBalancerSourceRanges: List(Str(1, 49)),
  allocateLoadBalancerNodePorts: Nullable(Bool()),
  sessionAffinity: Type.Unsafe<string>({ type: 'string', enum: ['', 'None', 'ClientIP'] }),
  sessionAffinityConfig: JsonObject('a Kubernetes SessionAffinityConfig'),
  trafficDistribution: Str(0, 63),
}, { description: 'the controller Service (xDS, health, metrics)' });

const Controller = Obj({
  replicaCount: Int(0),
  logLevel: OneOf(LOG_LEVELS, { description: 'switchboard controller --log-level' }),
  image: ControllerImage,
  extraContainers: KubeList('Kubernetes Containers added to the controller pod'),
  extraVolumes: KubeList('Kubernetes Volumes added to the controller pod'),
  extraVolumeMounts: KubeList('Kubernetes VolumeMounts added to the controller container'),
  extraEnv: MapOf(Type.Union([Type.String(), Type.Number(), Type.Boolean(), JsonObject('a valueFrom source, or {valueFrom: …}')]), { description: 'env name → a scalar or a valueFrom source' }),
  horizontalPodAutoscaler: JsonObject('HorizontalPodAutoscaler spec (autoscaling/v2) without scaleTargetRef; {} = none'),
  verticalPodAutoscaler: JsonObject('VerticalPodAutoscaler spec without targetRef; {} = none'),
  podDisruptionBudget: JsonObject('PodDisruptionBudget spec without selector; {} = none'),
  strategy: JsonObject('Deployment strategy'),
  priorityClassName: Name(),
  revisionHistoryLimit: Nullable(Int(0)),
  xds: Obj({
    mode: OneOf(TRANSPORT_MODES, { description: 'switchboard controller --xds-mode' }),
    tls: Obj({ secretName: Name() }, { description: 'a kubernetes.io/tls Secret with tls.crt, tls.key, ca.crt; "" = generated' }),
  }),
  service: Service,
});

const Monitoring = Obj({
  enabled: Bool({ description: 'needs the Prometheus operator CRDs' }),
  grafanaDashboard: Obj({ enabled: Bool(), labels: Labels() }),
  proxy: Obj({
    gatewayClassNames: List(Name()),
    namespaceSelector: JsonObject('a Prometheus operator NamespaceSelector ({any: true} or {matchNames: [...]}); {} = any'),
    podMonitor: Obj({ enabled: Bool() }),
  }),
  serviceMonitor: Obj({
    enabled: Bool(),
    extraLabels: Labels(),
    interval: Str(1, 32, { pattern: '^([0-9]+(ms|s|m|h))+$' }),
  }),
});

export const ChartValues = Obj({
  nameOverride: Str(0, 63),
  fullnameOverride: Str(0, 63),
  commonLabels: Labels(),
  image: Obj({
    registry: Name(),
    tag: Str(0, 128),
    pullPolicy: OneOf(['Always', 'IfNotPresent', 'Never'] as const),
  }),
  imagePullSecrets: List(Obj({ name: Name() })),
  serviceAccount: Obj({ create: Bool(), name: Name(), annotations: Annotations() }),
  controllerName: Str(0, 253),
  gatewayClassName: Str(0, 253),
  gatewayClassParametersRefs: MapOf(Obj({ name: Str(1, 253), namespace: Type.Optional(Str(1, 63)) })),
  discoveryNamespaceSelectors: List(LabelSelector('a namespace selector; the list is OR-ed')),
  proxyModels: Obj({ enabled: Bool() }),
  inferenceExtension: Obj({ enabled: Bool() }),
  istio: Obj({ autoEnabled: Bool(), caAddress: Name(), clusterId: Name(), namespace: Str(0, 63), network: Name(), revision: Str(0, 63) }),
  proxy: Obj({ image: Image('the data-plane image the controller provisions; "" falls back to image.*') }),
  deploymentAnnotations: Annotations(),
  podAnnotations: Annotations(),
  podLabels: Labels(),
  affinity: JsonObject('a Kubernetes Affinity'),
  nodeSelector: MapOf(Type.String()),
  tolerations: KubeList('Kubernetes Tolerations'),
  podSecurityContext: JsonObject('a Kubernetes PodSecurityContext'),
  securityContext: JsonObject('a Kubernetes SecurityContext'),
  dnsConfig: JsonObject('a Kubernetes PodDNSConfig'),
  resources: JsonObject('Kubernetes ResourceRequirements of the controller'),
  controller: Controller,
  monitoring: Monitoring,
});

/** The JSON Schema Helm checks values against (draft-07). */
export function chartValuesSchema(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Switchboard chart values',
    ...(JSON.parse(JSON.stringify(ChartValues)) as Record<string, unknown>),
  };
}
