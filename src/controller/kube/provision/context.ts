/**
 * What the provisioned proxies are told about their controller: its URL (the controller's own
 * Service, which the chart names; SWITCHBOARD_PROXY_CONTROLLER_URL overrides) and the image tag
 * (the controller's version, so proxies run what the controller speaks).
 */
import fs from 'node:fs';
import type { ProvisionContext } from './objects.ts';

export interface ControllerFacts {
  readonly xdsMode: 'plaintext' | 'tls' | 'either';
  readonly xdsPort: number;
  readonly namespace: string;
}

export interface ProvisionSettings extends ProvisionContext {
  readonly caSecret?: { readonly namespace: string; readonly name: string };
}

/**
 * From the controller's environment (the chart sets these): SWITCHBOARD_PROXY_CONTROLLER_URL or
 * SWITCHBOARD_SERVICE_NAME, SWITCHBOARD_PROXY_IMAGE (`[registry/]repository[:tag]`),
 * SWITCHBOARD_PROXY_IMAGE_TAG, SWITCHBOARD_XDS_CA_SECRET (in the controller's namespace).
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
  const manifest = JSON.parse(fs.readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
