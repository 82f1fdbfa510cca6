import type { KubeObject } from './object.ts';

/**
 * The part of switchboard.dev/v1alpha1 ProxyBackend the Gateway API translator reads. The full
 * schema lives in src/api/v1alpha1/; here only `spec.static` is used as a backendRef target.
 */
export interface ProxyBackendStaticView {
  host?: unknown;
  port?: unknown;
}

export interface ProxyBackendView extends KubeObject {
  kind: 'ProxyBackend';
  spec?: { static?: ProxyBackendStaticView; [member: string]: unknown };
}
