/**
 * YAML builders for the objects every e2e case needs but none is about: the GatewayClass, the
 * Service + EndpointSlice pair that points at a local upstream, and TLS Secrets. Tests write the
 * Gateway and HTTPRoute under test inline, so the case reads like the manifest a user would write.
 */
import { stringify } from 'yaml';
import type { TestCertificate } from './certs.ts';

export const CONTROLLER_NAME = 'switchboard.dev/gateway-controller';
export const GATEWAY_CLASS_NAME = 'switchboard';

/** Something listening on loopback: an echo server, a WebSocket echo, or a deliberately closed port. */
export interface Upstream {
  readonly host: string;
  readonly port: number;
}

export function gatewayClass(): string {
  return doc({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: GATEWAY_CLASS_NAME },
    spec: { controllerName: CONTROLLER_NAME },
  });
}

export interface ListenerSpec {
  name: string;
  port: number;
  protocol?: 'HTTP' | 'HTTPS';
  hostname?: string;
  /** Secret names (same namespace) for an HTTPS listener's certificateRefs. */
  certificates?: readonly string[];
  /** Where attached routes may live; default the Gateway's own namespace, as the Gateway API says. */
  routesFrom?: 'Same' | 'All';
}

/** A Gateway of the switchboard class. */
export function gateway(name: string, listeners: readonly ListenerSpec[], namespace = 'default'): string {
  return doc({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace },
    spec: {
      gatewayClassName: GATEWAY_CLASS_NAME,
      listeners: listeners.map((l) => ({
        name: l.name,
        port: l.port,
        protocol: l.protocol ?? 'HTTP',
        ...(l.hostname ? { hostname: l.hostname } : {}),
        ...(l.certificates ? { tls: { mode: 'Terminate', certificateRefs: l.certificates.map((c) => ({ kind: 'Secret', name: c })) } } : {}),
        ...(l.routesFrom ? { allowedRoutes: { namespaces: { from: l.routesFrom } } } : {}),
      })),
    },
  });
}

/** GatewayClass plus Gateway `gw` with one HTTP listener `http` (port 80): the preamble most e2e manifests share. */
export function httpGateway(port = 80): string {
  return gatewayClass() + gateway('gw', [{ name: 'http', port }]);
}

export interface ServiceOptions {
  namespace?: string;
  /** The Service port routes refer to; the endpoint port is the upstream's real port. */
  port?: number;
  appProtocol?: string;
  /** false publishes the endpoint as not ready, so the Service has no ready endpoint. */
  ready?: boolean;
}

/** A Service and its EndpointSlice whose single endpoint is `upstream`. */
export function service(name: string, upstream: Upstream, opts: ServiceOptions = {}): string {
  const namespace = opts.namespace ?? 'default';
  const port = opts.port ?? 8080;
  const appProtocol = opts.appProtocol ? { appProtocol: opts.appProtocol } : {};
  return doc({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { ports: [{ name: 'http', port, targetPort: upstream.port, protocol: 'TCP', ...appProtocol }] },
  }) + doc({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-slice`, namespace, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: upstream.port, protocol: 'TCP', ...appProtocol }],
    endpoints: [{ addresses: [upstream.host], conditions: { ready: opts.ready ?? true } }],
  });
}

/** A `kubernetes.io/tls` Secret holding a test certificate. */
export function tlsSecret(name: string, cert: TestCertificate, namespace = 'default'): string {
  return doc({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(cert.certPem).toString('base64'),
      'tls.key': Buffer.from(cert.keyPem).toString('base64'),
    },
  });
}

function doc(object: unknown): string {
  return `---\n${stringify(object)}`;
}

/** An HTTPRoute on Gateway `gw` sending PathPrefix `prefix` to Service `backend` port 8080. */
export function prefixRoute(name: string, prefix: string, backend: string): string {
  return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: ${name}, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: ${prefix} } }]
      backendRefs: [{ name: ${backend}, port: 8080 }]
`;
}

/** A ProxyPolicy with the given `traffic` YAML (written unindented) on HTTPRoute `routeName`. */
export function routeTrafficPolicy(name: string, routeName: string, traffic: string): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyPolicy
metadata: { name: ${name}, namespace: default }
spec:
  targetRefs: [{ group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${routeName} }]
  traffic:
${traffic.replace(/^/gm, '    ')}
`;
}

/**
 * An `mcp` ProxyBackend `tools` multiplexing static targets on 127.0.0.1 (name → port), and the
 * HTTPRoute `mcp` on Gateway `gw` sending PathPrefix /mcp to it; `policies` is the backend's
 * `spec.policies` YAML, written unindented.
 */
export function mcpToolsBackend(targets: Readonly<Record<string, number>>, policies?: string): string {
  return `
---
apiVersion: switchboard.dev/v1alpha1
kind: ProxyBackend
metadata: { name: tools }
spec:
  mcp:
    targets:
${Object.entries(targets).map(([name, port]) => `      - { name: ${name}, static: { host: 127.0.0.1, port: ${port} } }`).join('\n')}
${policies ? `  policies:\n${policies.replace(/^/gm, '    ')}\n` : ''}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mcp }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - matches: [{ path: { type: PathPrefix, value: /mcp } }]
      backendRefs: [{ group: switchboard.dev, kind: ProxyBackend, name: tools }]
`;
}
