/**
 * ProxyPolicy ancestors that set a field the data plane ignores (status/not-applied.ts) are not
 * `Accepted=True`. Per ancestor, the kinds of backend its target reaches decide which rows apply:
 * `traffic.retry` on a route to an AI backend is reported on that route's ancestor, not on one
 * whose routes all go to Services.
 *
 *   - something it sets is ignored, the rest applies: `Accepted=False` reason `PartiallyApplied`
 *     naming every ignored path; `Attached` is left as merging decided (what applies stays in
 *     effect, and the IR is unchanged);
 *   - everything it sets is ignored: `Accepted=False` and `Attached=False`, reason `Unsupported`.
 */
import type { Condition, KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import type { Backend, Route } from '../../../ir/types.ts';
import { isDict } from '../read.ts';
import { condition } from '../status/conditions.ts';
import {
  describeFindings, findNotApplied, proxyBackendKind, whollyIgnored, REASON_PARTIALLY_APPLIED, REASON_UNSUPPORTED,
  type BackendKind, type Finding, type Scope,
} from '../status/not-applied.ts';
import type { ListenerRef } from './apply.ts';
import { sectionsOf, type PolicyModel, type Section } from './model.ts';
import { point, type ResolvedTarget } from './targets.ts';

/** The IR backend's kind as the NOT_APPLIED rows name it. */
export function backendKindOf(backend: Backend): BackendKind {
  if (backend.kind === 'Service') return 'Service';
  return backend.ai ? 'ai' : backend.mcp ? 'mcp' : backend.a2a ? 'a2a' : backend.dynamicForward ? 'forwardProxy' : backend.agentRuntime ? 'agentRuntime' : 'static';
}

/**
 * Attachment point key → the kinds of backend requests reach through it. The points are those
 * apply.ts gathers policies at: a rule's listener, Gateway, route and rule points reach its
 * backends' kinds; a backend's Service/ProxyBackend points reach its own kind.
 *
 * Each route's (point, kind) pairs are kept per IR Route object and reused while its listeners
 * and its backends' kinds are the same (an incremental translation keeps unchanged routes as the
 * same objects): one route edit at 10k routes builds one route's point keys, not 40k.
 */
export function reachedKinds(routes: ReadonlyMap<string, Route>, routeListeners: ReadonlyMap<string, readonly ListenerRef[]>, backends: ReadonlyMap<string, Backend>, wanted?: ReadonlySet<string>): Map<string, Set<BackendKind>> {
  const reach = new Map<string, Set<BackendKind>>();
  const targeted = wanted && routesNamedBy(wanted, routes);
  for (const routeKey of targeted ?? routes.keys()) {
    const route = routes.get(routeKey) as Route;
    const listeners = routeListeners.get(routeKey) ?? NO_LISTENERS;
    let kept = routeReach.get(route);
    if (!kept || !sameListeners(kept.listeners, listeners) || !sameBackends(kept, route, backends)) {
      kept = routeReachOf(route, listeners, backends);
      routeReach.set(route, kept);
    }
    for (const [key, kind] of kept.pairs) {
      // Only the points some policy targets are ever read: the others are not collected.
      if (wanted && !wanted.has(key)) continue;
      let set = reach.get(key);
      if (!set) reach.set(key, (set = new Set<BackendKind>()));
      set.add(kind);
    }
  }
  return reach;
}

const NO_LISTENERS: readonly ListenerRef[] = [];

/**
 * When no wanted point is a Gateway or listener (points every route on it reaches), the only
 * routes whose pairs can be wanted are those a route or rule point names: `route/<routeKey>` and
 * `rule/<routeKey>/<rule name>`. Those routes, found by key, instead of a walk over every route —
 * a route edit at 10k routes and 1k route policies visits 1k routes, not 10k (issue 15). A rule
 * point is split at every `/` so a rule name holding one still finds its route. Undefined: walk
 * every route.
 */
function routesNamedBy(wanted: ReadonlySet<string>, routes: ReadonlyMap<string, Route>): Set<string> | undefined {
  const named = new Set<string>();
  for (const key of wanted) {
    if (key.startsWith('gateway/') || key.startsWith('listener/')) return undefined;
    if (key.startsWith('route/')) {
      const routeKey = key.slice('route/'.length);
      if (routes.has(routeKey)) named.add(routeKey);
    } else if (key.startsWith('rule/')) {
      for (let at = key.indexOf('/', 'rule/'.length); at !== -1; at = key.indexOf('/', at + 1)) {
        const routeKey = key.slice('rule/'.length, at);
        if (routes.has(routeKey)) named.add(routeKey);
      }
    }
  }
  return named;
}

interface RouteReach {
  readonly listeners: readonly ListenerRef[];
  /** The backend each weighted backend of each rule named, in order (undefined: none): the pairs hold while they are the same objects. */
  readonly backends: readonly (Backend | undefined)[];
  readonly pairs: readonly (readonly [string, BackendKind])[];
}

const routeReach = new WeakMap<Route, RouteReach>();

/** The (point key, backend kind) pairs one route adds to the reach (reachedKinds). */
export function reachPairs(route: Route, listeners: readonly ListenerRef[], backends: ReadonlyMap<string, Backend>): readonly (readonly [string, BackendKind])[] {
  return routeReachOf(route, listeners, backends).pairs;
}

function routeReachOf(route: Route, listeners: readonly ListenerRef[], backends: ReadonlyMap<string, Backend>): RouteReach {
  const pairs: [string, BackendKind][] = [];
  const named: (Backend | undefined)[] = [];
  const listenerKeys = listeners.flatMap((l) => [point.gateway(l.gateway), point.listener(l.key)]);
  for (const rule of route.rules) {
    const ruleKeys = [point.route(route.key), ...(rule.name !== undefined ? [point.rule(route.key, rule.name)] : [])];
    for (const weighted of rule.backends) {
      const backend = weighted.backendKey === null ? undefined : backends.get(weighted.backendKey);
      named.push(backend);
      if (!backend) continue;
      const kind = backendKindOf(backend);
      for (const key of [...listenerKeys, ...ruleKeys]) pairs.push([key, kind]);
    }
  }
  return { listeners, backends: named, pairs };
}

function sameListeners(a: readonly ListenerRef[], b: readonly ListenerRef[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as ListenerRef;
    const y = b[i] as ListenerRef;
    if (x.key !== y.key || x.gateway.namespace !== y.gateway.namespace || x.gateway.name !== y.gateway.name) return false;
  }
  return true;
}

/** Whether every weighted backend of `route` still names the same backend object (so the same kind). */
function sameBackends(kept: RouteReach, route: Route, backends: ReadonlyMap<string, Backend>): boolean {
  let i = 0;
  for (const rule of route.rules) {
    for (const weighted of rule.backends) {
      const backend = weighted.backendKey === null ? undefined : backends.get(weighted.backendKey);
      if (backend !== kept.backends[i++]) return false;
    }
  }
  return i === kept.backends.length;
}

/** The kinds one target reaches: through the routes it covers, or as the Service/ProxyBackend it names. */
export function targetKinds(target: ResolvedTarget, reach: ReadonlyMap<string, ReadonlySet<BackendKind>>, proxyBackends: ReadonlyMap<string, KubeObject>, namespace: string): Set<BackendKind> {
  const kinds = new Set<BackendKind>();
  for (const p of target.points) for (const k of reach.get(p.key) ?? []) kinds.add(k);
  const ref = target.ancestorRef;
  if (ref.kind === 'Service') kinds.add('Service');
  if (ref.kind === 'ProxyBackend') {
    const kind = proxyBackendKind(proxyBackends.get(`${namespace}/${String(ref.name)}`));
    if (kind) kinds.add(kind);
    // One MCP target by name: its own steps run per call to it (rows of `mcpTarget`), on an mcp backend still.
    if (kind === 'mcp' && ref.sectionName !== undefined) kinds.add('mcpTarget');
  }
  return kinds;
}

/** Keys of a section that are not members (they choose how the members apply). */
const NOT_MEMBERS: Readonly<Partial<Record<Section, ReadonlySet<string>>>> = { traffic: new Set(['phase']) };

/** What one ancestor ignores, and whether that is everything it sets there. */
export function ancestorFindings(policy: PolicyModel, sections: readonly Section[], kinds: ReadonlySet<BackendKind>): { findings: Finding[]; nothingApplied: boolean } {
  const spec = isDict(policy.object.spec) ? policy.object.spec : {};
  const findings: Finding[] = [];
  let members = 0;
  let ignored = 0;
  for (const section of sections) {
    const value = spec[section];
    if (!isDict(value)) continue;
    // Frontend members apply at the Bind, before any backend is chosen.
    const scope: Scope = section;
    const placeKinds = section === 'frontend' ? undefined : kinds;
    findings.push(...findNotApplied(scope, value, `spec.${section}`, placeKinds));
    const each: (BackendKind | undefined)[] = placeKinds && placeKinds.size > 0 ? [...placeKinds] : [undefined];
    for (const [member, memberValue] of Object.entries(value)) {
      if (memberValue === undefined || NOT_MEMBERS[section]?.has(member)) continue;
      members++;
      if (each.every((kind) => whollyIgnored(scope, member, memberValue, value, kind))) ignored++;
    }
  }
  return { findings, nothingApplied: members > 0 && ignored === members };
}

/**
 * The policy's status with every accepted ancestor checked against the NOT_APPLIED table.
 * Ancestors already not accepted (invalid, not found, conflicted) keep their conditions.
 */
export function withNotApplied(status: ObjectStatus, policy: PolicyModel, targets: readonly ResolvedTarget[], reach: ReadonlyMap<string, ReadonlySet<BackendKind>>, proxyBackends: ReadonlyMap<string, KubeObject>): ObjectStatus {
  const body = status.status as { ancestors?: { conditions: Condition[] }[] } | undefined;
  if (!body?.ancestors || policy.problems.length > 0) return status;
  const written = new Set(sectionsOf(policy));
  const ancestors = body.ancestors.map((ancestor, i) => {
    const accepted = ancestor.conditions.find((c) => c.type === 'Accepted');
    const target = targets[i];
    if (!target || accepted?.status !== 'True') return ancestor;
    const sections = [...new Set(target.points.flatMap((p) => p.sections))].filter((s) => written.has(s));
    const { findings, nothingApplied } = ancestorFindings(policy, sections, targetKinds(target, reach, proxyBackends, policy.namespace));
    if (findings.length === 0) return ancestor;
    const message = `Not applied: ${describeFindings(findings)}`;
    if (nothingApplied) {
      return {
        ...ancestor,
        conditions: [
          condition('Accepted', false, REASON_UNSUPPORTED, message, policy.generation),
          condition('Attached', false, REASON_UNSUPPORTED, 'Nothing this policy sets is in effect for this target', policy.generation),
        ],
      };
    }
    const rest = ancestor.conditions.filter((c) => c.type !== 'Accepted');
    return { ...ancestor, conditions: [condition('Accepted', false, REASON_PARTIALLY_APPLIED, `${message}. The rest is applied (see Attached)`, policy.generation), ...rest] };
  });
  return { ...status, status: { ...body, ancestors } };
}
