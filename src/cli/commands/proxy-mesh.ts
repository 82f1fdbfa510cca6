/**
 * The mesh settings of a provisioned proxy (ProxyParameters `mesh`, or the chart's istio.*
 * defaults; docs/kubernetes.md): MESH_ENABLED, MESH_CA_ADDRESS, MESH_TRUST_DOMAIN,
 * MESH_ADDITIONAL_TRUST_DOMAINS, MESH_CLUSTER_ID, MESH_NETWORK.
 *
 * What the proxy does with them: checks them at start (a malformed value stops the proxy, with
 * the variable named, rather than running with a mesh setting it misread) and exposes them —
 * logged at start and as the `switchboard_proxy_mesh_info` gauge on /metrics, so what each pod
 * was given can be seen and alerted on. There is no mesh data path yet (no HBONE tunnel
 * listener, no certificate from the mesh CA): the ProxyParameters status says so.
 */
import { Gauge, type Registry } from 'prom-client';

export interface MeshSettings {
  readonly enabled: boolean;
  readonly caAddress: string;
  readonly trustDomain: string;
  /** Always includes trustDomain (SPEC.md: the local domain is always accepted). */
  readonly trustDomains: readonly string[];
  readonly clusterId: string;
  readonly network: string;
}

export class MeshEnvError extends Error {}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** Bounds a label value on /metrics and what is parsed (the list comes from ProxyParameters). */
const MAX_TRUST_DOMAINS = 64;

/** The mesh settings in `env`, or undefined when MESH_ENABLED is absent. Throws MeshEnvError. */
export function meshSettings(env: NodeJS.ProcessEnv): MeshSettings | undefined {
  const flag = env.MESH_ENABLED;
  if (flag === undefined) return undefined;
  if (flag !== 'true' && flag !== 'false') throw new MeshEnvError(`MESH_ENABLED must be true or false, got "${flag}"`);
  if (flag === 'false') return { enabled: false, caAddress: '', trustDomain: '', trustDomains: [], clusterId: '', network: '' };
  const caAddress = env.MESH_CA_ADDRESS ?? '';
  let url: URL | undefined;
  try {
    url = new URL(caAddress);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'https:') throw new MeshEnvError(`MESH_CA_ADDRESS must be an https:// URL (the mesh CA, e.g. https://istiod.istio-system.svc:15012), got "${caAddress}"`);
  const trustDomain = env.MESH_TRUST_DOMAIN ?? '';
  if (!DOMAIN.test(trustDomain)) throw new MeshEnvError(`MESH_TRUST_DOMAIN must be a trust domain (lower-case DNS name), got "${trustDomain}"`);
  const additional = (env.MESH_ADDITIONAL_TRUST_DOMAINS ?? '').split(',').map((d) => d.trim()).filter((d) => d !== '');
  if (additional.length > MAX_TRUST_DOMAINS) throw new MeshEnvError(`MESH_ADDITIONAL_TRUST_DOMAINS lists more than ${MAX_TRUST_DOMAINS} trust domains`);
  const bad = additional.find((d) => !DOMAIN.test(d));
  if (bad !== undefined) throw new MeshEnvError(`MESH_ADDITIONAL_TRUST_DOMAINS: "${bad}" is not a trust domain (lower-case DNS name)`);
  const clusterId = env.MESH_CLUSTER_ID || 'Kubernetes';
  return { enabled: true, caAddress, trustDomain, trustDomains: [...new Set([trustDomain, ...additional])], clusterId, network: env.MESH_NETWORK ?? '' };
}

/** `switchboard_proxy_mesh_info{enabled,trust_domain,trust_domains,cluster_id,network,ca_address} 1`. */
export function registerMeshInfo(registry: Registry, mesh: MeshSettings): void {
  const gauge = new Gauge({
    name: 'switchboard_proxy_mesh_info',
    help: 'The mesh settings this proxy was given (ProxyParameters mesh); 1 while it runs',
    labelNames: ['enabled', 'trust_domain', 'trust_domains', 'cluster_id', 'network', 'ca_address'] as const,
    registers: [registry],
  });
  gauge.set({ enabled: String(mesh.enabled), trust_domain: mesh.trustDomain, trust_domains: mesh.trustDomains.join(','), cluster_id: mesh.clusterId, network: mesh.network, ca_address: mesh.caAddress }, 1);
}
