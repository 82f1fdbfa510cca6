import type { ProxyConfig } from '../../ir/types.ts';
import { resolveUrlEndpoint, type EndpointResolver } from '../ext/endpoint.ts';

/**
 * Where a policy's external service lives (ext_authz, rate-limit service, remote JWKS …): a `url`
 * as written, or a backend of this config by key. A backend resolves to its first ready
 * endpoint; none is an error, which marks the member invalid so its route fails closed.
 */
export function endpointResolver(config: ProxyConfig): EndpointResolver {
  return (endpoint) => {
    if (endpoint.backendKey === undefined) return resolveUrlEndpoint(endpoint);
    const backend = config.backends[endpoint.backendKey];
    if (!backend) throw new Error(`backend ${endpoint.backendKey} is not in the config`);
    const first = backend.endpoints[0];
    if (!first) throw new Error(`backend ${endpoint.backendKey} has no ready endpoint`);
    return { host: first.host, port: first.port };
  };
}
