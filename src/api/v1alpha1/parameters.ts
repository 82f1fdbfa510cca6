/** ProxyParameters: how the data-plane workload of a Gateway is provisioned. */
import type { Static } from 'typebox';
import { Bool, Int, JsonObject, List, MapOf, Obj, OneOf, Opt, Str } from './schema/build.ts';
import { EnvVar } from './refs.ts';

const Overlay = (description: string) =>
  Obj({
    metadata: Opt(Obj({ labels: Opt(MapOf(Str(0, 63))), annotations: Opt(MapOf(Str(0, 262144))) })),
    spec: Opt(JsonObject('partial resource spec, strategic-merged')),
  }, { description });

const Seconds = () => Int(0, 31_536_000);

export const ProxyParametersSpec = Obj({
  workload: Opt(Obj({ kind: Opt(OneOf(['Deployment', 'DaemonSet'] as const, { default: 'Deployment' })) })),
  logging: Opt(Obj({
    level: Opt(Str(1, 1024, { default: 'info', description: 'log filter, comma-separated per-module settings allowed' })),
    format: Opt(OneOf(['json', 'text'] as const, { default: 'text' })),
  })),
  rawConfig: Opt(JsonObject('merged into the generated config; typed fields win')),
  image: Opt(Obj({
    registry: Opt(Str(1, 253)),
    repository: Opt(Str(1, 253)),
    tag: Opt(Str(1, 128)),
    digest: Opt(Str(1, 128)),
    pullPolicy: Opt(OneOf(['Always', 'IfNotPresent', 'Never'] as const)),
  })),
  env: Opt(List(EnvVar(), { description: 'SESSION_KEY overrides the controller-managed session key' })),
  resources: Opt(JsonObject('Kubernetes ResourceRequirements')),
  shutdown: Opt(Obj({ min: Seconds(), max: Seconds() }, {
    description: 'termination deadlines in seconds',
    rules: [{ path: '', message: 'min must not exceed max', cel: 'self.min <= self.max', check: (s) => (s.min as number) <= (s.max as number) }],
  })),
  mesh: Opt(Obj({
    enabled: Opt(Bool()),
    caAddress: Opt(Str(1, 1024, { description: 'default the built-in in-cluster mesh CA (port 15012)' })),
    trustDomain: Opt(Str(1, 253, { description: 'default cluster.local or the revision default' })),
    additionalTrustDomains: Opt(List(Str(1, 253))),
    clusterId: Opt(Str(1, 253, { default: 'Kubernetes' })),
    network: Opt(Str(0, 253)),
  })),
  modelCatalog: Opt(Obj({
    sources: Opt(List(Obj({ configMap: Obj({ name: Str(1, 253), key: Opt(Str(1, 253, { default: 'catalog.json' })) }) }))),
  }, { description: 'effective only on Gateway-level parameters' })),
  deployment: Opt(Overlay('overlay of the Deployment')),
  daemonSet: Opt(Overlay('overlay of the DaemonSet')),
  service: Opt(Overlay('overlay of the Service')),
  serviceAccount: Opt(Overlay('overlay of the ServiceAccount')),
  podDisruptionBudget: Opt(Overlay('present creates a PodDisruptionBudget')),
  horizontalPodAutoscaler: Opt(Overlay('present creates a HorizontalPodAutoscaler (Deployment only)')),
}, {
  rules: [{
    path: '.horizontalPodAutoscaler',
    message: 'horizontalPodAutoscaler needs a Deployment workload',
    cel: "!has(self.horizontalPodAutoscaler) || !has(self.workload) || !has(self.workload.kind) || self.workload.kind == 'Deployment'",
    check: (s) => !s.horizontalPodAutoscaler || (s.workload as { kind?: string } | undefined)?.kind !== 'DaemonSet',
  }],
});

export const ProxyParametersStatus = JsonObject('status of the provisioned workload');

export type ProxyParametersSpec = Static<typeof ProxyParametersSpec>;
