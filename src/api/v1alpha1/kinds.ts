/** The kinds of switchboard.dev/v1alpha1: their schemas and the facts the CRDs need. */
import { Type } from '../typebox.ts';
import type { TSchema } from 'typebox';
import { List, MapOf, Obj, Opt, Str } from './schema/build.ts';
import { ProxyBackendSpec, ProxyBackendStatus } from './backend/proxy-backend.ts';
import { ProxyPolicySpec, ProxyPolicyStatus } from './policy/proxy-policy.ts';
import { ProxyModelSpec, ProxyModelStatus } from './model/proxy-model.ts';
import { ProxyParametersSpec, ProxyParametersStatus } from './parameters.ts';

export const GROUP = 'switchboard.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const PROXY_KINDS = ['ProxyBackend', 'ProxyModel', 'ProxyModelList', 'ProxyParameters', 'ProxyPolicy'] as const;
export type ProxyKind = (typeof PROXY_KINDS)[number];

/** A kind served by a CRD (ProxyModelList is the list kind of ProxyModel). */
export interface CrdKind {
  kind: Exclude<ProxyKind, 'ProxyModelList'>;
  plural: string;
  singular: string;
  listKind: string;
  description: string;
  spec: TSchema;
  status: TSchema;
  /** The printer column "Type" shows this JSONPath. */
  typeColumn?: { jsonPath: string; description: string };
}

export const CRD_KINDS: readonly CrdKind[] = [
  {
    kind: 'ProxyBackend', plural: 'proxybackends', singular: 'proxybackend', listKind: 'ProxyBackendList',
    description: 'A backend the proxy forwards to: LLM providers, MCP servers, A2A agents, static hosts, a cloud-A agent runtime or a dynamic forward proxy.',
    spec: ProxyBackendSpec, status: ProxyBackendStatus,
    typeColumn: { jsonPath: '.spec', description: 'backend type' },
  },
  {
    kind: 'ProxyModel', plural: 'proxymodels', singular: 'proxymodel', listKind: 'ProxyModelList',
    description: 'An LLM model exposed by gateways (experimental; enabled by the chart value proxyModels.enabled).',
    spec: ProxyModelSpec, status: ProxyModelStatus,
    typeColumn: { jsonPath: '.spec.provider', description: 'model provider' },
  },
  {
    kind: 'ProxyParameters', plural: 'proxyparameters', singular: 'proxyparameters', listKind: 'ProxyParametersList',
    description: 'How the data-plane workload of a Gateway is provisioned.',
    spec: ProxyParametersSpec, status: ProxyParametersStatus,
    typeColumn: { jsonPath: '.spec.workload.kind', description: 'workload kind' },
  },
  {
    kind: 'ProxyPolicy', plural: 'proxypolicies', singular: 'proxypolicy', listKind: 'ProxyPolicyList',
    description: 'Frontend, traffic and backend policy attached to gateways, listeners, routes, route rules, Services and backends.',
    spec: ProxyPolicySpec, status: ProxyPolicyStatus,
    typeColumn: { jsonPath: '.spec.targetRefs[0].kind', description: 'kind of the first target' },
  },
];

/** Object metadata as a file carries it: a name is required, everything else is the orchestrator's. */
const Metadata = Type.Object({
  name: Str(1, 253),
  namespace: Opt(Str(1, 63)),
  labels: Opt(MapOf(Str(0, 63))),
  annotations: Opt(MapOf(Type.String())),
}, { additionalProperties: true });

function envelope(k: CrdKind) {
  return Obj({
    apiVersion: Type.String(),
    kind: Type.String(),
    metadata: Metadata,
    spec: k.spec,
    status: Opt(k.status),
  });
}

const byKind = new Map(CRD_KINDS.map((k) => [k.kind, k]));

export const KIND_SCHEMAS: Readonly<Record<ProxyKind, TSchema>> = {
  ProxyBackend: envelope(byKind.get('ProxyBackend')!),
  ProxyModel: envelope(byKind.get('ProxyModel')!),
  ProxyParameters: envelope(byKind.get('ProxyParameters')!),
  ProxyPolicy: envelope(byKind.get('ProxyPolicy')!),
  ProxyModelList: Obj({
    apiVersion: Type.String(),
    kind: Type.String(),
    metadata: Opt(Type.Object({}, { additionalProperties: true })),
    items: List(envelope(byKind.get('ProxyModel')!)),
  }),
};

export function isProxyKind(apiVersion: string, kind: string): boolean {
  return apiVersion === API_VERSION && (PROXY_KINDS as readonly string[]).includes(kind);
}
