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

export function provisionContext(facts: ControllerFacts, env: NodeJS.ProcessEnv = process.env): ProvisionContext {
  // With `either` the controller takes both; proxies use TLS.
  const scheme = facts.xdsMode === 'plaintext' ? 'http' : 'https';
  const service = env.SWITCHBOARD_SERVICE_NAME ?? 'switchboard';
  return {
    controllerUrl: env.SWITCHBOARD_PROXY_CONTROLLER_URL ?? `${scheme}://${service}.${facts.namespace}.svc:${facts.xdsPort}`,
    defaultTag: env.SWITCHBOARD_PROXY_IMAGE_TAG ?? packageVersion(),
  };
}

function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}
