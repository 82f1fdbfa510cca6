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
export function reachedKinds(routes: Readonly<Record<string, Route>>, routeListeners: ReadonlyMap<string, readonly ListenerRef[]>, backends: ReadonlyMap<string, Backend>, wanted?: ReadonlySet<string>): Map<string, Set<BackendKind>> {
  const reach = new Map<string, Set<BackendKind>>();
  for (const [routeKey, route] of Object.entries(routes)) {
    const listeners = routeListeners.get(routeKey) ?? [];
    const kinds = route.rules.map((rule) => rule.backends.map((weighted) => {
      const backend = weighted.backendKey === null ? undefined : backends.get(weighted.backendKey);
      return backend ? backendKindOf(backend) : undefined;
    }));
    let kept = routeReach.get(route);
    if (!kept || !sameListeners(kept.listeners, listeners) || !sameKinds(kept.kinds, kinds)) {
      kept = { listeners, kinds, pairs: routePairs(route, listeners, kinds) };
      routeReach.set(route, kept);
    }
    for (const [key, kind] of kept.pairs) {
      // Only the points some policy targets are ever read: the others are not collected.
      if (wanted && !wanted.has(key)) continue;
      const set = reach.get(key) ?? new Set<BackendKind>();
      set.add(kind);
      reach.set(key, set);
    }
  }
  return reach;
}

interface RouteReach {
  readonly listeners: readonly ListenerRef[];
  /** Per rule, per weighted backend: the kind of the backend it names (undefined: none). */
  readonly kinds: readonly (readonly (BackendKind | undefined)[])[];
  readonly pairs: readonly (readonly [string, BackendKind])[];
}

const routeReach = new WeakMap<Route, RouteReach>();

function routePairs(route: Route, listeners: readonly ListenerRef[], kinds: RouteReach['kinds']): [string, BackendKind][] {
  const pairs: [string, BackendKind][] = [];
  const listenerKeys = listeners.flatMap((l) => [point.gateway(l.gateway), point.listener(l.key)]);
  route.rules.forEach((rule, r) => {
    const ruleKeys = [point.route(route.key), ...(rule.name !== undefined ? [point.rule(route.key, rule.name)] : [])];
    for (const kind of kinds[r] ?? []) {
      if (kind === undefined) continue;
      for (const key of [...listenerKeys, ...ruleKeys]) pairs.push([key, kind]);
    }
  });
  return pairs;
}

function sameListeners(a: readonly ListenerRef[], b: readonly ListenerRef[]): boolean {
  return a === b || (a.length === b.length && a.every((l, i) => {
    const other = b[i] as ListenerRef;
    return l.key === other.key && l.gateway.namespace === other.gateway.namespace && l.gateway.name === other.gateway.name;
  }));
}

function sameKinds(a: RouteReach['kinds'], b: RouteReach['kinds']): boolean {
  return a.length === b.length && a.every((rule, r) => {
    const other = b[r] as readonly (BackendKind | undefined)[];
    return rule.length === other.length && rule.every((kind, i) => kind === other[i]);
  });
}

/** The kinds one target reaches: through the routes it covers, or as the Service/ProxyBackend it names. */
function targetKinds(target: ResolvedTarget, reach: ReadonlyMap<string, ReadonlySet<BackendKind>>, proxyBackends: ReadonlyMap<string, KubeObject>, namespace: string): Set<BackendKind> {
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
