/**
 * Where the IR names a backend: a typed walk over the known reference fields only.
 *
 * The IR's own shapes name backends in fixed places (a rule's weighted backends, a RequestMirror
 * filter). Inside effective policies, the translator's schema-driven lowering
 * (src/controller/translate/policy/lower.ts) turns each endpoint `backendRef` the API schema
 * declares into `backendKey`; those places are listed in reference-paths.ts as paths of declared
 * property names (`extAuth.backendKey`, `rateLimit.global.backendKey`, …), checked against the
 * schemas by its test. A path never
 * runs through a free-form field (a JSON value the API keeps as written: jwtSign claims, a
 * transformation body, `metadata`), since such a field declares no properties: a `"backendKey"`
 * a user writes there is data, not a reference, and is neither checked (src/ir/validate.ts) nor
 * followed when a remote proxy's slice is cut (src/distribute/remote/split.ts) — following it
 * would send another namespace's backend, with its credentials, to that proxy.
 */
import type { BackendPolicy, FrontendPolicy, TrafficPolicy } from './policy.ts';
import { REFERENCE_PATHS } from './reference-paths.ts';
import type { Backend, Bind, Filter, Route } from './types.ts';

/** Property name → the paths below it; `REFERENCE` marks a `backendKey` leaf, `ANY_KEY` a map's entries. */
type Trie = Map<string, Trie | typeof REFERENCE>;
const REFERENCE = true;
const ANY_KEY = '\u0000*';

const isDict = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function child(trie: Trie, key: string): Trie {
  const existing = trie.get(key);
  if (existing instanceof Map) return existing;
  const created: Trie = new Map();
  trie.set(key, created);
  return created;
}

/** The trie of dotted paths ending in a reference (`*` for any key of a map), in the paths' order. */
function trieOf(paths: readonly string[]): Trie {
  const trie: Trie = new Map();
  for (const path of paths) {
    const keys = path.split('.').map((key) => (key === '*' ? ANY_KEY : key));
    const leaf = keys.pop() as string;
    keys.reduce(child, trie).set(leaf, REFERENCE);
  }
  return trie;
}

const TRAFFIC = trieOf(REFERENCE_PATHS.traffic);
const FRONTEND = trieOf(REFERENCE_PATHS.frontend);
/** ProxyPolicy `backend` members and a ProxyBackend's inline `policies` (also a target's or provider's). */
const BACKEND = trieOf(REFERENCE_PATHS.backend);

/** Called with each referenced backend key and the property trail to it from the walked value. */
export type ReferenceVisitor = (backendKey: string, trail: readonly (string | number)[]) => void;

function walk(value: unknown, trie: Trie, trail: (string | number)[], visit: ReferenceVisitor): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      trail.push(i);
      walk(value[i], trie, trail, visit);
      trail.pop();
    }
    return;
  }
  if (!isDict(value)) return;
  for (const [key, next] of trie) {
    if (key === ANY_KEY) {
      for (const entry of Object.keys(value)) {
        trail.push(entry);
        if (next !== REFERENCE) walk(value[entry], next, trail, visit);
        trail.pop();
      }
      continue;
    }
    if (!Object.hasOwn(value, key)) continue;
    const found = value[key];
    trail.push(key);
    if (next === REFERENCE) {
      if (typeof found === 'string') visit(found, trail);
    } else {
      walk(found, next, trail, visit);
    }
    trail.pop();
  }
}

/** The backends an effective traffic policy's members name (external services: extAuth, extProc, rate-limit service, JWKS …). */
export function trafficPolicyReferences(policy: TrafficPolicy, visit: ReferenceVisitor): void {
  walk(policy, TRAFFIC, [], visit);
}

export function frontendPolicyReferences(policy: FrontendPolicy, visit: ReferenceVisitor): void {
  walk(policy, FRONTEND, [], visit);
}

/** A backend policy's own members; its `subBackends` are not followed (see backendPolicyReferences). */
export function backendPolicyMemberReferences(policy: BackendPolicy, visit: ReferenceVisitor): void {
  walk(policy, BACKEND, [], visit);
}

/** A backend policy's members and, with their trail, each of its `subBackends`' members. */
export function backendPolicyReferences(policy: BackendPolicy, visit: ReferenceVisitor): void {
  backendPolicyMemberReferences(policy, visit);
  if (policy.subBackends) {
    for (const [name, sub] of Object.entries(policy.subBackends)) backendPolicyMemberReferences(sub, (key, trail) => visit(key, ['subBackends', name, ...trail]));
  }
}

const prefixed = (visit: ReferenceVisitor, prefix: readonly (string | number)[]): ReferenceVisitor => (key, trail) => visit(key, [...prefix, ...trail]);

function filterReferences(filters: readonly Filter[], prefix: readonly (string | number)[], visit: ReferenceVisitor): void {
  filters.forEach((filter, i) => {
    if (filter.type === 'RequestMirror') visit(filter.backendKey, [...prefix, i, 'backendKey']);
  });
}

/** Every backend a Bind names: its frontend policy's and its listeners' pre-routing policies' services. */
export function bindReferences(bind: Bind, visit: ReferenceVisitor): void {
  if (bind.frontend) frontendPolicyReferences(bind.frontend, prefixed(visit, ['frontend']));
  bind.listeners.forEach((listener, i) => {
    if (listener.preRouting) trafficPolicyReferences(listener.preRouting, prefixed(visit, ['listeners', i, 'preRouting']));
  });
}

/** Every backend a Route names: rule backends, mirrors, and the services of its effective policies. */
export function routeReferences(route: Route, visit: ReferenceVisitor): void {
  route.rules.forEach((rule, r) => {
    const at = ['rules', r];
    filterReferences(rule.filters, [...at, 'filters'], visit);
    if (rule.traffic) trafficPolicyReferences(rule.traffic, prefixed(visit, [...at, 'traffic']));
    if (rule.trafficByListener) {
      for (const [listener, policy] of Object.entries(rule.trafficByListener)) trafficPolicyReferences(policy, prefixed(visit, [...at, 'trafficByListener', listener]));
    }
    rule.backends.forEach((weighted, b) => {
      const wat = [...at, 'backends', b];
      if (weighted.backendKey !== null) visit(weighted.backendKey, [...wat, 'backendKey']);
      filterReferences(weighted.filters, [...wat, 'filters'], visit);
      if (weighted.backendPolicy) backendPolicyReferences(weighted.backendPolicy, prefixed(visit, [...wat, 'backendPolicy']));
      if (weighted.backendPolicyByListener) {
        for (const [listener, policy] of Object.entries(weighted.backendPolicyByListener)) backendPolicyReferences(policy, prefixed(visit, [...wat, 'backendPolicyByListener', listener]));
      }
    });
  });
}

/** Every backend a Backend names: its AI providers' (a ProxyModel rule's models' too) and MCP targets' policies, its AI policy's guard services. */
export function backendReferences(backend: Backend, visit: ReferenceVisitor): void {
  if (backend.ai) {
    const groups = (at: readonly (string | number)[], list: NonNullable<Backend['ai']>['groups']) => list.forEach((group, g) => group.providers.forEach((provider, p) => {
      if (provider.policies) backendPolicyReferences(provider.policies, prefixed(visit, [...at, 'groups', g, 'providers', p, 'policies']));
    }));
    groups(['ai'], backend.ai.groups);
    backend.ai.models?.forEach((model, m) => groups(['ai', 'models', m], model.groups));
    const aiTrie = BACKEND.get('ai');
    if (backend.ai.policy && aiTrie instanceof Map) walk(backend.ai.policy, aiTrie, ['ai', 'policy'], visit);
  }
  if (backend.mcp) {
    backend.mcp.targets.forEach((target, t) => {
      if (target.policies) backendPolicyReferences(target.policies, prefixed(visit, ['mcp', 'targets', t, 'policies']));
    });
  }
}

/** The reference paths as the walks use them, one per line (`*` for a map's entries): for tests and review. */
export function referencePaths(): { traffic: string[]; frontend: string[]; backend: string[] } {
  const list = (trie: Trie, prefix: string, out: string[]): string[] => {
    for (const [key, next] of trie) {
      const path = prefix === '' ? (key === ANY_KEY ? '*' : key) : `${prefix}.${key === ANY_KEY ? '*' : key}`;
      if (next === REFERENCE) out.push(path);
      else list(next, path, out);
    }
    return out;
  };
  return { traffic: list(TRAFFIC, '', []), frontend: list(FRONTEND, '', []), backend: list(BACKEND, '', []) };
}
