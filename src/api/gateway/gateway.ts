import type { KubeObject } from './object.ts';
import type { AllowedRoutes, LabelSelector, SecretObjectReference } from './common.ts';

export interface GatewayClassSpec {
  controllerName: string;
  description?: string;
}

export interface GatewayClass extends KubeObject {
  kind: 'GatewayClass';
  spec: GatewayClassSpec;
}

export type ProtocolType = 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP' | string;

export interface GatewayTLSConfig {
  mode?: 'Terminate' | 'Passthrough';
  certificateRefs?: SecretObjectReference[];
  options?: Record<string, string>;
}

/** One listener of a Gateway; ListenerSet entries have the same shape. */
export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: ProtocolType;
  tls?: GatewayTLSConfig;
  allowedRoutes?: AllowedRoutes;
}

export interface AllowedListeners {
  namespaces?: { from?: 'All' | 'Same' | 'Selector' | 'None'; selector?: LabelSelector };
}

export interface GatewaySpec {
  gatewayClassName: string;
  listeners?: Listener[];
  allowedListeners?: AllowedListeners;
  addresses?: { type?: string; value: string }[];
}

export interface Gateway extends KubeObject {
  kind: 'Gateway';
  spec: GatewaySpec;
}
