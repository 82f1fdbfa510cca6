/**
 * A cluster-sized object set for the control-plane benchmark (bench/control-plane.ts): one
 * GatewayClass, one Gateway per namespace (its own port), Services with an EndpointSlice each
 * pointing at one local upstream, `routes` HTTPRoutes spread over the namespaces and `policies`
 * ProxyPolicies, each on one route (a header transformation and a local rate limit, the common
 * traffic policy shape). Route i serves PathPrefix `/r<i>` on its namespace's Gateway.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../src/api/gateway/object.ts';

export interface ClusterShape {
  readonly routes: number;
  readonly policies: number;
  readonly namespaces: number;
  /** Services per namespace; routes pick one round-robin. */
  readonly servicesPerNamespace: number;
  /** One listener port per namespace's Gateway (index = namespace index). */
  readonly ports: readonly number[];
  readonly upstream: { readonly host: string; readonly port: number };
}

export const CONTROLLER_NAME = 'switchboard.dev/gateway-controller';

export function namespaceName(index: number): string {
  return `team-${index}`;
}

export function routeNamespace(shape: ClusterShape, route: number): string {
  return namespaceName(route % shape.namespaces);
}

export function infrastructure(shape: ClusterShape): KubeObject[] {
  const objects: KubeObject[] = [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'switchboard' }, spec: { controllerName: CONTROLLER_NAME } }];
  for (let n = 0; n < shape.namespaces; n++) {
    const namespace = namespaceName(n);
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace },
      spec: { gatewayClassName: 'switchboard', listeners: [{ name: 'http', port: shape.ports[n], protocol: 'HTTP' }] },
    });
    for (let s = 0; s < shape.servicesPerNamespace; s++) {
      const name = `svc-${s}`;
      objects.push({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec: { ports: [{ name: 'http', port: 8080, targetPort: shape.upstream.port, protocol: 'TCP' }] } });
      objects.push({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `${name}-slice`, namespace, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: shape.upstream.port, protocol: 'TCP' }],
        endpoints: [{ addresses: [shape.upstream.host], conditions: { ready: true } }],
      });
    }
  }
  return objects;
}

/** HTTPRoute `r<i>`; `path` overrides its PathPrefix (an edit). */
export function route(shape: ClusterShape, index: number, path = `/r${index}`): KubeObject {
  const namespace = routeNamespace(shape, index);
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: `r${index}`, namespace },
    spec: {
      parentRefs: [{ name: 'gw' }],
      rules: [{
        matches: [{ path: { type: 'PathPrefix', value: path } }],
        backendRefs: [{ name: `svc-${Math.floor(index / shape.namespaces) % shape.servicesPerNamespace}`, port: 8080 }],
      }],
    },
  };
}

/** ProxyPolicy `p<i>` on route `r<i>`. */
export function policy(shape: ClusterShape, index: number): KubeObject {
  return {
    apiVersion: 'switchboard.dev/v1alpha1',
    kind: 'ProxyPolicy',
    metadata: { name: `p${index}`, namespace: routeNamespace(shape, index) },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: `r${index}` }],
      traffic: {
        rateLimit: { local: [{ requests: 100_000_000, unit: 'Seconds' }] },
        transformation: { request: { set: [{ name: 'x-route', value: `"r${index}"` }] } },
      },
    },
  };
}

export function cluster(shape: ClusterShape): KubeObject[] {
  const objects = infrastructure(shape);
  for (let i = 0; i < shape.routes; i++) objects.push(route(shape, i));
  for (let i = 0; i < shape.policies; i++) objects.push(policy(shape, i));
  return objects;
}

export function yamlDocuments(objects: readonly KubeObject[]): string {
  return objects.map((o) => `---\n${stringify(o)}`).join('');
}
