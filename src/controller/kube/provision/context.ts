/**
 * What the provisioned proxies are told about their controller: its URL (the controller's own
 * Service, which the chart names; SWITCHBOARD_PROXY_CONTROLLER_URL overrides) and the image tag
 * (the controller's version, so proxies run what the controller speaks).
 */
import fs from 'node:fs';
import { packageManifestUrl } from '../../../common/entry-points.ts';
import type { MeshDefaults, ProvisionContext } from './objects.ts';

export interface ControllerFacts {
  readonly xdsMode: 'plaintext' | 'tls' | 'either';
  readonly xdsPort: number;
  readonly namespace: string;
}

export interface ProvisionSettings extends ProvisionContext {
  readonly caSecret?: { readonly namespace: string; readonly name: string };
  /** The chart's `inferenceExtension.enabled`: InferencePool routing, which this version lacks (the provisioner warns). */
  readonly inferenceExtension?: boolean;
}

/** The chart's default GatewayClass name (chart/templates/_helpers.tpl switchboard.gatewayClassName). */
export const DEFAULT_GATEWAY_CLASS_NAME = 'switchboard';

/**
 * From the controller's environment (the chart sets these): SWITCHBOARD_PROXY_CONTROLLER_URL or
 * SWITCHBOARD_SERVICE_NAME, SWITCHBOARD_PROXY_IMAGE (`[registry/]repository[:tag]`),
 * SWITCHBOARD_PROXY_IMAGE_TAG, SWITCHBOARD_XDS_CA_SECRET (in the controller's namespace),
 * SWITCHBOARD_GATEWAY_CLASS_NAME and SWITCHBOARD_ISTIO_* (meshDefaults), and
 * SWITCHBOARD_INFERENCE_EXTENSION_ENABLED.
 */
export function provisionContext(facts: ControllerFacts, env: NodeJS.ProcessEnv = process.env): ProvisionSettings {
  // With `either` the controller takes both; proxies use TLS.
  const scheme = facts.xdsMode === 'plaintext' ? 'http' : 'https';
  const service = env.SWITCHBOARD_SERVICE_NAME ?? 'switchboard';
  const image = env.SWITCHBOARD_PROXY_IMAGE ? parseImage(env.SWITCHBOARD_PROXY_IMAGE) : undefined;
  return {
    controllerUrl: env.SWITCHBOARD_PROXY_CONTROLLER_URL ?? `${scheme}://${service}.${facts.namespace}.svc:${facts.xdsPort}`,
    defaultTag: env.SWITCHBOARD_PROXY_IMAGE_TAG ?? image?.tag ?? packageVersion(),
    ...(image ? { defaultImage: { registry: image.registry, repository: image.repository } } : {}),
    ...(env.SWITCHBOARD_XDS_CA_SECRET && scheme === 'https' ? { caSecret: { namespace: facts.namespace, name: env.SWITCHBOARD_XDS_CA_SECRET } } : {}),
    mesh: meshDefaults(env),
    ...(env.SWITCHBOARD_INFERENCE_EXTENSION_ENABLED === 'true' ? { inferenceExtension: true } : {}),
  };
}

/**
 * The chart's `istio.*` as the mesh defaults of provisioned proxies: the CA is
 * SWITCHBOARD_ISTIO_CA_ADDRESS, else istiod (`istiod-<revision>` with a revision) in
 * SWITCHBOARD_ISTIO_NAMESPACE (default istio-system) on 15012; SWITCHBOARD_ISTIO_AUTO_ENABLED
 * turns mesh on for the Gateways of SWITCHBOARD_GATEWAY_CLASS_NAME.
 */
export function meshDefaults(env: NodeJS.ProcessEnv): MeshDefaults {
  const namespace = env.SWITCHBOARD_ISTIO_NAMESPACE || 'istio-system';
  const istiod = env.SWITCHBOARD_ISTIO_REVISION ? `istiod-${env.SWITCHBOARD_ISTIO_REVISION}` : 'istiod';
  return {
    autoEnabled: env.SWITCHBOARD_ISTIO_AUTO_ENABLED === 'true',
    gatewayClassName: env.SWITCHBOARD_GATEWAY_CLASS_NAME || DEFAULT_GATEWAY_CLASS_NAME,
    caAddress: env.SWITCHBOARD_ISTIO_CA_ADDRESS || `https://${istiod}.${namespace}.svc:15012`,
    ...(env.SWITCHBOARD_ISTIO_CLUSTER_ID ? { clusterId: env.SWITCHBOARD_ISTIO_CLUSTER_ID } : {}),
    ...(env.SWITCHBOARD_ISTIO_NETWORK ? { network: env.SWITCHBOARD_ISTIO_NETWORK } : {}),
  };
}

/** `ghcr.io/org/repo:tag`, `localhost:5000/repo`, `repo:tag`: a first segment with `.` or `:` (or `localhost`) is the registry. */
export function parseImage(reference: string): { registry: string; repository: string; tag: string | undefined } {
  const slash = reference.lastIndexOf('/');
  const colon = reference.lastIndexOf(':');
  const tag = colon > slash ? reference.slice(colon + 1) : undefined;
  const name = colon > slash ? reference.slice(0, colon) : reference;
  const first = name.split('/', 1)[0]!;
  const hasRegistry = name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return { registry: hasRegistry ? first : '', repository: hasRegistry ? name.slice(first.length + 1) : name, tag: tag || undefined };
}

function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(packageManifestUrl(), 'utf8')) as { version: string };
  return manifest.version;
}
