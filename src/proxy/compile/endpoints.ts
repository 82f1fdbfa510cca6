import type { ProxyConfig } from '../../ir/types.ts';
import { withUrlFallback, type EndpointResolver } from '../ext/endpoint.ts';
import { backendTargets, publishBackends } from '../policies/backend/service-targets.ts';

/**
 * Where a policy's external service (ext_authz, rate-limit service, remote JWKS …) lives: a `url`
 * as written, or a backend of this config by key — each of its ready endpoints, with the TLS of
 * the backend policies attached to it (policies/backend/service-targets.ts). A backend with no
 * ready endpoint (or an invalid policy) is an error, which marks the member invalid so its route
 * fails closed. Publishes the config's backends for what resolves them live (tunnels, token
 * endpoints).
 */
export function endpointResolver(config: ProxyConfig): EndpointResolver {
  publishBackends(config.backends);
  const urls = withUrlFallback(undefined);
  return (endpoint) => (endpoint.backendKey === undefined ? urls(endpoint) : backendTargets(config.backends, endpoint.backendKey));
}
