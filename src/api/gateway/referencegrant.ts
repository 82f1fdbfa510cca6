import type { KubeObject } from './object.ts';

/** ReferenceGrant (v1beta1): lets objects in `from` namespaces reference objects in this namespace. */
export interface ReferenceGrantFrom { group: string; kind: string; namespace: string }
export interface ReferenceGrantTo { group: string; kind: string; name?: string }

export interface ReferenceGrant extends KubeObject {
  kind: 'ReferenceGrant';
  spec: { from: ReferenceGrantFrom[]; to: ReferenceGrantTo[] };
}
