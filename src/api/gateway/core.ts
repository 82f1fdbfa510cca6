import type { KubeObject } from './object.ts';

/** The subset of core/v1 and discovery.k8s.io/v1 the translator reads. */

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
  appProtocol?: string;
}

export interface Service extends KubeObject {
  kind: 'Service';
  spec: { type?: string; externalName?: string; ports?: ServicePort[]; clusterIP?: string };
}

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export interface EndpointSliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  hostname?: string;
}

export interface EndpointSlicePort {
  name?: string;
  port?: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  kind: 'EndpointSlice';
  addressType?: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints?: EndpointSliceEndpoint[];
  ports?: EndpointSlicePort[];
}

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';

export interface Secret extends KubeObject {
  kind: 'Secret';
  type?: string;
  /** base64-encoded values */
  data?: Record<string, string>;
  /** plain values, merged over `data` (as the API server does on write) */
  stringData?: Record<string, string>;
}

export interface ConfigMap extends KubeObject {
  kind: 'ConfigMap';
  data?: Record<string, string>;
}

/** Kubernetes labels every Namespace with its own name under this key. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export interface Namespace extends KubeObject {
  kind: 'Namespace';
}
