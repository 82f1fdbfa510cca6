/**
 * The effective backend policy of one sub-backend (an AI provider, an MCP target). The translator
 * merges once (policy objects < the backend's inline policies < a policy naming the sub-backend by
 * sectionName < the sub-backend's own inline policies) and writes each sub-backend's complete
 * policy into the route's `backendPolicy.subBackends[name]`; the proxy only looks it up, never
 * merges.
 */
import type { BackendPolicy } from '../../../ir/policy.ts';

/** The route policy without its `subBackends`, one object per route policy (compiled-policy caches key on identity). */
const stripped = new WeakMap<BackendPolicy, BackendPolicy>();

/**
 * `route.subBackends[name]` when the translator wrote one; else the route policy itself (nothing
 * targets this sub-backend); without a route policy (a handler driven outside a gateway route)
 * the sub-backend's own inline policies are all there is.
 */
export function subBackendPolicy(route: BackendPolicy | undefined, name: string, own: BackendPolicy | undefined): BackendPolicy | undefined {
  if (route === undefined) return own;
  const targeted = route.subBackends?.[name];
  if (targeted !== undefined) return targeted;
  if (route.subBackends === undefined) return route;
  let rest = stripped.get(route);
  if (rest === undefined) {
    const { subBackends: _ignored, ...members } = route;
    stripped.set(route, (rest = members));
  }
  return rest;
}

/**
 * The members of `names` a sub-backend's effective policy sets differently from the route's: the
 * sub-backend's own (a sectionName policy, its inline policies), which run on calls to it only,
 * while what it inherits runs once for the whole request (MCP targets: docs/mcp.md).
 */
export function ownMembers<M extends keyof BackendPolicy>(route: BackendPolicy, sub: BackendPolicy, names: readonly M[]): M[] {
  return names.filter((name) => sub[name] !== undefined && JSON.stringify(sub[name]) !== JSON.stringify(route[name]));
}
