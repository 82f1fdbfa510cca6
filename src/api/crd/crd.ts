/** Builds the apiextensions.k8s.io/v1 CustomResourceDefinitions of our kinds from their typebox schemas. */
import { CRD_KINDS, GROUP, VERSION } from '../v1alpha1/kinds.ts';
import type { CrdKind } from '../v1alpha1/kinds.ts';
import { toOpenAPI } from './openapi.ts';
import type { OpenAPISchema } from './openapi.ts';

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** Where each kind's Accepted condition lives in its status. */
const ACCEPTED_PATH: Record<CrdKind['kind'], string> = {
  ProxyBackend: '.status.conditions[?(@.type=="Accepted")].status',
  ProxyModel: '.status.parents[0].conditions[?(@.type=="Accepted")].status',
  ProxyParameters: '.status.conditions[?(@.type=="Accepted")].status',
  ProxyPolicy: '.status.ancestors[0].conditions[?(@.type=="Accepted")].status',
};

function printerColumns(k: CrdKind): Record<string, unknown>[] {
  return [
    { name: 'Accepted', type: 'string', jsonPath: ACCEPTED_PATH[k.kind], description: 'whether the controller accepted the object' },
    ...(k.typeColumn ? [{ name: 'Type', type: 'string', jsonPath: k.typeColumn.jsonPath, description: k.typeColumn.description }] : []),
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
}

function rootSchema(k: CrdKind): OpenAPISchema {
  return {
    type: 'object',
    description: k.description,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion of this object' },
      kind: { type: 'string', description: 'Kind of this object' },
      metadata: { type: 'object' },
      spec: toOpenAPI(k.spec),
      status: toOpenAPI(k.status),
    },
  };
}

export function buildCrd(k: CrdKind): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${k.plural}.${GROUP}`,
      ...(k.kind === 'ProxyModel' ? { annotations: { [`${GROUP}/experimental`]: 'true' } } : {}),
    },
    spec: {
      group: GROUP,
      names: { kind: k.kind, listKind: k.listKind, plural: k.plural, singular: k.singular, categories: ['switchboard'] },
      scope: 'Namespaced',
      versions: [{
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: printerColumns(k),
        schema: { openAPIV3Schema: rootSchema(k) },
      }],
    },
  };
}

export function buildCrds(): CustomResourceDefinition[] {
  return CRD_KINDS.map(buildCrd);
}
