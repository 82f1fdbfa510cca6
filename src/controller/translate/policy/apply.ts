import {
  BACKEND_MEMBERS, FRONTEND_MEMBERS, TRAFFIC_MEMBERS,
  type BackendMember, type BackendPolicy, type FrontendPolicy, type InvalidPolicy, type TrafficPolicy,
} from '../../../ir/policy.ts';
import type { Backend, Bind, Listener, Route, RouteRule, WeightedBackend } from '../../../ir/types.ts';
import { canonicalJson } from '../hash.ts';
import { effective, mergeMembers, OutcomeTracker, type Contribution } from './merge.ts';
import type { Members } from './members.ts';
import type { AttachmentIndex } from './places.ts';
import { subBackendsOf, type SubBackend } from './sub-backends.ts';
import { LEVEL, point } from './targets.ts';

/** Where a listener sits, as the IR names it. */
export interface ListenerRef {
  readonly key: string;
  readonly gateway: { readonly namespace: string; readonly name: string };
}

/** A ProxyBackend's inline `spec.policies`, lowered, by ProxyBackend `<ns>/<name>`. */
export interface InlineBackendPolicy {
  readonly source: string;
  readonly members: Members<BackendMember>;
  readonly problems: readonly string[];
  /** Sub-backend names of the ProxyBackend (for `subBackends`). */
  readonly subBackends: readonly string[];
  /** The deprecated `spec.policies.mcp.authentication`, lowered to a traffic jwtAuthentication. */
  readonly mcpAuthentication?: { readonly jwtAuthentication: unknown; readonly problems: readonly string[] };
}

export interface PolicyPlaces {
  readonly index: AttachmentIndex;
  readonly tracker: OutcomeTracker;
  readonly backends: Readonly<Record<string, Backend>>;
  readonly inline: ReadonlyMap<string, InlineBackendPolicy>;
}

const isPre = (p: { phase: string }): boolean => p.phase === 'PreRouting';
const isPost = (p: { phase: string }): boolean => p.phase === 'PostRouting';

function listenerKeys(listener: ListenerRef): string[] {
  return [point.gateway(listener.gateway), point.listener(listener.key)];
}

interface Extra {
  readonly contributions: readonly Contribution[];
  readonly invalid: readonly InvalidPolicy[];
}
const NO_EXTRA: Extra = { contributions: [], invalid: [] };

function traffic(places: PolicyPlaces, keys: readonly string[], phase: (p: { phase: string }) => boolean, extra: Extra = NO_EXTRA): TrafficPolicy | undefined {
  const { contributions, invalid } = places.index.gather(keys, 'traffic', phase);
  return effective<TrafficPolicy>(mergeMembers([...contributions, ...extra.contributions], TRAFFIC_MEMBERS, places.tracker), [...invalid, ...extra.invalid]);
}

/**
 * The deprecated `spec.policies.mcp.authentication` of the rule's MCP backends, as if a ProxyPolicy
 * on the route set it: a Route-level jwtAuthentication younger than every real policy, so an
 * explicit jwtAuthentication on the route (or a rule of it) wins. One that did not lower (a
 * missing issuer or Secret) fails the rule closed.
 */
function deprecatedMcpAuthentication(rule: RouteRule, places: PolicyPlaces): Extra {
  const contributions: Contribution[] = [];
  const invalid: InvalidPolicy[] = [];
  const seen = new Set<string>();
  for (const weighted of rule.backends) {
    const backend = weighted.backendKey === null ? undefined : places.backends[weighted.backendKey];
    if (backend?.kind !== 'ProxyBackend' || backend.mcp === undefined) continue;
    const inline = places.inline.get(`${backend.namespace}/${backend.name}`);
    const auth = inline?.mcpAuthentication;
    if (!inline || !auth || seen.has(inline.source)) continue;
    seen.add(inline.source);
    if (auth.problems.length > 0) invalid.push({ source: inline.source, message: auth.problems.join('; ') });
    else contributions.push({ source: inline.source, level: LEVEL.Route, order: Number.MAX_SAFE_INTEGER, override: false, members: { jwtAuthentication: auth.jwtAuthentication } });
  }
  return contributions.length === 0 && invalid.length === 0 ? NO_EXTRA : { contributions, invalid };
}

/** Listeners with their effective PreRouting policy; binds with their effective frontend policy. */
export function applyToBinds(binds: readonly Bind[], places: PolicyPlaces): Bind[] {
  return binds.map((bind) => {
    const listeners = bind.listeners.map((listener): Listener => {
      const preRouting = traffic(places, listenerKeys(listener), isPre);
      return preRouting ? { ...listener, preRouting } : listener;
    });
    const keys = bind.listeners.flatMap((l) => [point.gateway(l.gateway), point.gatewayPort(l.gateway, bind.port)]);
    const { contributions, invalid } = places.index.gather(keys, 'frontend');
    const frontend = effective<FrontendPolicy>(mergeMembers(contributions, FRONTEND_MEMBERS, places.tracker), invalid);
    return { ...bind, listeners, ...(frontend ? { frontend } : {}) };
  });
}

/** Routes with effective traffic per rule and backend policy per rule × backend. */
export function applyToRoute(route: Route, listeners: readonly ListenerRef[], places: PolicyPlaces): Route {
  const rules = route.rules.map((rule): RouteRule => {
    const ruleKeys = [point.route(route.key), ...(rule.name !== undefined ? [point.rule(route.key, rule.name)] : [])];
    const deprecated = deprecatedMcpAuthentication(rule, places);
    const perListener = (l: ListenerRef) => traffic(places, [...listenerKeys(l), ...ruleKeys], isPost, deprecated);
    const backends = rule.backends.map((b) => applyToBackend(b, listeners, ruleKeys, places));
    const applied = spread('traffic', 'trafficByListener', listeners, perListener);
    // Nothing applies: the same object, so an unchanged route keeps its identity from one translation to the next.
    if (isEmpty(applied) && backends.every((b, i) => b === rule.backends[i])) return rule;
    return { ...rule, ...applied, backends };
  });
  return rules.every((rule, i) => rule === route.rules[i]) ? route : { ...route, rules };
}

const isEmpty = (value: object): boolean => {
  for (const _ in value) return false;
  return true;
};

function applyToBackend(weighted: WeightedBackend, listeners: readonly ListenerRef[], ruleKeys: readonly string[], places: PolicyPlaces): WeightedBackend {
  const backend = weighted.backendKey === null ? undefined : places.backends[weighted.backendKey];
  if (!backend) return weighted;
  const backendKeys = backend.kind === 'Service'
    ? [point.service(backend.namespace, backend.name), point.service(backend.namespace, backend.name, Number(backend.key.slice(backend.key.lastIndexOf(':') + 1)))]
    : [point.backend(backend.namespace, backend.name)];
  const inline = backend.kind === 'ProxyBackend' ? places.inline.get(`${backend.namespace}/${backend.name}`) : undefined;
  const subs = backend.kind === 'ProxyBackend' ? subBackendsOf(backend, inline?.subBackends ?? []) : [];
  const perListener = (l: ListenerRef): BackendPolicy | undefined => {
    const keys = [...listenerKeys(l), ...ruleKeys, ...backendKeys];
    const policy = backendPolicy(places, keys, inline);
    // Each provider or target gets its complete effective policy, so the proxy only looks it up.
    const subBackends: Record<string, BackendPolicy> = {};
    for (const sub of subs) {
      const subKeys = sub.section === undefined ? keys : [...keys, point.backend(backend.namespace, backend.name, sub.section)];
      const effective = backendPolicy(places, subKeys, inline, sub.own);
      if (effective && canonicalJson(effective) !== canonicalJson(policy)) subBackends[sub.name] = effective;
    }
    if (Object.keys(subBackends).length === 0) return policy;
    return { ...(policy ?? { sources: {} }), subBackends };
  };
  const applied = spread('backendPolicy', 'backendPolicyByListener', listeners, perListener);
  return isEmpty(applied) ? weighted : { ...weighted, ...applied };
}

function backendPolicy(places: PolicyPlaces, keys: readonly string[], inline: InlineBackendPolicy | undefined, own?: SubBackend['own']): BackendPolicy | undefined {
  const { contributions, invalid } = places.index.gather(keys, 'backend');
  const all: Contribution[] = [...contributions];
  const problems: InvalidPolicy[] = [...invalid];
  if (inline) {
    if (inline.problems.length > 0) problems.push({ source: inline.source, message: inline.problems.join('; ') });
    else all.push({ source: inline.source, level: LEVEL.Inline, order: 0, override: false, members: inline.members });
  }
  if (!own) return effective<BackendPolicy>(mergeMembers(all, BACKEND_MEMBERS, places.tracker), problems);
  // A ProxyModel's ai fields replace only their own fields of the ai the levels below give (SubBackend.own.aiByField).
  const below = own.aiByField ? mergeMembers(all, ['ai'], new OutcomeTracker()) : undefined;
  const belowAi = below?.members.ai as Record<string, unknown> | undefined;
  const ownAi = own.members.ai as Record<string, unknown> | undefined;
  // Fields of the ai below that the model leaves alone: with none, the model's ai is the member as it was.
  const kept = belowAi === undefined ? [] : Object.keys(belowAi).filter((field) => ownAi?.[field] === undefined);
  const members = kept.length === 0 ? own.members : { ...own.members, ai: { ...belowAi, ...ownAi } };
  all.push({ source: own.source, level: LEVEL.SubBackendInline, order: 0, override: false, members });
  const merged = mergeMembers(all, BACKEND_MEMBERS, places.tracker);
  // The ai member is then both policies': the fields below the model does not set, and the model's.
  const sources = kept.length === 0 || merged.sources.ai?.[0] !== own.source ? merged.sources : { ...merged.sources, ai: [...(below?.sources.ai ?? []), own.source] };
  return effective<BackendPolicy>({ members: merged.members, sources }, problems);
}

/**
 * One value for every listener when they agree (`plain`), else one per listener key (`byListener`):
 * a route attached to two Gateways may see different Gateway policies on each.
 */
function spread<P extends string, B extends string, T>(plain: P, byListener: B, listeners: readonly ListenerRef[], compute: (l: ListenerRef) => T | undefined): Partial<Record<P, T> & Record<B, Record<string, T>>> {
  const values = listeners.map((l) => [l.key, compute(l)] as const);
  if (values.every(([, v]) => v === undefined)) return {};
  // One listener (most routes): nothing to compare, so no canonical JSON to build.
  if (values.length === 1) return { [plain]: values[0][1] } as Partial<Record<P, T> & Record<B, Record<string, T>>>;
  const first = canonicalJson(values[0][1] ?? null);
  if (values.every(([, v]) => canonicalJson(v ?? null) === first) && values[0][1] !== undefined) {
    return { [plain]: values[0][1] } as Partial<Record<P, T> & Record<B, Record<string, T>>>;
  }
  const map: Record<string, T> = {};
  for (const [key, value] of values) if (value !== undefined) map[key] = value;
  return { [byListener]: map } as Partial<Record<P, T> & Record<B, Record<string, T>>>;
}
