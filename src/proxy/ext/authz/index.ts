/**
 * External authorization clients. `createExtAuthzClient` picks the HTTP variant when the policy has
 * `http`, gRPC ext_authz otherwise, and puts the result cache in front when `cache` is set. Build
 * one per policy when config is compiled; `close()` it when the config is replaced.
 *
 *   const authz = createExtAuthzClient(policy.extAuth, { resolve })
 *   if (authz.bodyLimit !== undefined) buffer up to bodyLimit + 1 bytes into request.body
 *   const d = await authz.check(request, activation)
 *   d.allowed ? apply d.requestHeaders upstream, d.responseHeaders downstream, d.metadata → extauthz
 *             : answer d.status with d.headers and d.body
 */
import { CachedExtAuthzClient } from './cache.ts';
import { GrpcExtAuthzClient } from './grpc.ts';
import { HttpExtAuthzClient } from './http.ts';
import type { ExtAuthConfig, ExtAuthzClient, ExtAuthzOptions } from './types.ts';

export interface CreateExtAuthzOptions extends ExtAuthzOptions {
  /** Clock for the cache (tests). */
  readonly now?: () => number;
}

export function createExtAuthzClient(config: ExtAuthConfig, options: CreateExtAuthzOptions = {}): ExtAuthzClient {
  const client = config.http ? new HttpExtAuthzClient(config, options) : new GrpcExtAuthzClient(config, options);
  if (!config.cache) return client;
  try {
    return new CachedExtAuthzClient(client, config.cache, options.now);
  } catch (err) {
    client.close();
    throw err;
  }
}

export { CachedExtAuthzClient, DEFAULT_MAX_ENTRIES } from './cache.ts';
export { GrpcExtAuthzClient } from './grpc.ts';
export { HttpExtAuthzClient } from './http.ts';
export type { AuthzDecision, DenyReason, DownstreamRequest, ExtAuthConfig, ExtAuthzClient, ExtAuthzOptions } from './types.ts';
