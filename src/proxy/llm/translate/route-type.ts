/** Which LLM route a request path is (SPEC.md "Data-plane AI routes"). */
import type { RouteType } from '../../../ir/ai.ts';

const RERANK_SUFFIX = '/rerank';

/**
 * `routes` keys match by ends-with against the path (query excluded); the longest matching key
 * wins so `/v1/messages/count_tokens` and `/v1/messages` can coexist; `*` matches what nothing
 * else did. A path ending in `/rerank` (Cohere `/v2/rerank`, vLLM/Jina `/v1/rerank`) that no
 * explicit key claims is Rerank (SPEC.md's RouteType cannot name it). Without `routes`, or when
 * nothing matches, the request is Completions.
 */
export function routeTypeFor(path: string, routes: Readonly<Record<string, RouteType>> | undefined): RouteType {
  const q = path.indexOf('?');
  const bare = q < 0 ? path : path.slice(0, q);
  if (!routes) return bare.endsWith(RERANK_SUFFIX) ? 'Rerank' : 'Completions';
  let best: string | undefined;
  for (const suffix of Object.keys(routes)) {
    if (suffix === '*' || !bare.endsWith(suffix)) continue;
    if (best === undefined || suffix.length > best.length) best = suffix;
  }
  if (best !== undefined) return routes[best];
  if (bare.endsWith(RERANK_SUFFIX)) return 'Rerank';
  return routes['*'] ?? 'Completions';
}
