import type { KubeObject } from './object.ts';
import type { Listener } from './gateway.ts';

/** ListenerSet (gateway.networking.k8s.io/v1) and its predecessor XListenerSet (x-k8s.io/v1alpha1). */
export interface ListenerSetSpec {
  parentRef: { group?: string; kind?: string; name: string; namespace?: string };
  listeners?: Listener[];
}

export interface ListenerSet extends KubeObject {
  kind: 'ListenerSet' | 'XListenerSet';
  spec: ListenerSetSpec;
}
