import type { KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import { backendReferences } from '../../../ir/references.ts';
import type { Backend, Bind, Route } from '../../../ir/types.ts';
import { BackendResolver } from '../backend.ts';
import type { GatewayGraph } from '../gateway.ts';
import { namespacedName, namespaceOf, type Snapshot } from '../snapshot.ts';
import { applyToBinds, applyToRoute, type InlineBackendPolicy, type ListenerRef } from './apply.ts';
import { RecordingTracker, type ApplyMemo } from './apply-memo.ts';
import { OutcomeTracker } from './merge.ts';
import { PROXY_POLICY, readInlineBackendPolicies, readPolicy, type PolicyInputs } from './model.ts';
import { AttachmentIndex } from './places.ts';
import { hasOwnSubBackendPolicies } from './sub-backends.ts';
import { withConnectionPolicies } from './external-services.ts';
import { reachedKinds, reachPairs, targetKinds, withNotApplied } from './not-applied-status.ts';
import type { BackendKind } from '../status/not-applied.ts';
import type { PolicyModel } from './model.ts';
import type { ResolvedTarget } from './targets.ts';
import type { RouteEntry } from '../route-entry.ts';
import { policyStatus } from './status.ts';
import { statusSignature, type PolicyPassMemo } from './pass-memo.ts';
import { resolveTargets, subBackendNames } from './targets.ts';

export interface PolicyWorld {
  /** Every object given to translate (ProxyPolicies and ConfigMaps are read from the snapshot's age-ordered lists). */
  readonly objects: readonly KubeObject[];
  readonly snapshot: Snapshot;
  readonly graph: GatewayGraph;
  /** HTTPRoutes with at least one parentRef to our Gateways, by `<ns>/<name>`. */
  readonly ourRoutes: ReadonlyMap<string, KubeObject>;
  /** IR routes by key, in key order (a Map: walked and looked up without a 10k-key record's costs). */
  readonly routes: ReadonlyMap<string, Route>;
  /** The listeners each route is served on. */
  readonly routeListeners: ReadonlyMap<string, readonly ListenerRef[]>;
  readonly binds: readonly Bind[];
  readonly backends: ReadonlyMap<string, Backend>;
  readonly controllerName: string;
  /** Kept applyToRoute() results of an incremental translation (apply-memo.ts). */
  readonly memo?: ApplyMemo;
  /** The route keys whose routes changed since the previous translation when `routes` is its map changed in place (route-loop.ts). */
  readonly patchedRoutes?: { readonly keys: readonly string[] | undefined; readonly run: number; readonly entries?: readonly { readonly was: RouteEntry; readonly now: RouteEntry }[] | undefined };
  /** Kept policy reads and statuses of an incremental translation (pass-memo.ts). */
  readonly passMemo?: PolicyPassMemo;
}

export interface PolicyResult {
  readonly routes: Map<string, Route>;
  readonly binds: Bind[];
  /** Backends named by policy endpoints (extAuth, JWKS, tunnel …), to add to the config. */
  readonly backends: ReadonlyMap<string, Backend>;
  readonly statuses: ObjectStatus[];
}

const NO_LISTENERS: readonly ListenerRef[] = [];

/**
 * ProxyPolicy attachment, merging and status (docs/policies.md): resolves every policy's
 * targets, merges per member by precedence at each place, and hangs the effective policies on
 * the IR. With no policy and no inline backend policy the IR is returned unchanged.
 */
export function resolvePolicies(world: PolicyWorld): PolicyResult {
  const { snapshot } = world;
  const configMaps = snapshot.configMapList;
  const inputs: PolicyInputs = {
    snapshot,
    sources: { secrets: snapshot.secrets, configMaps: new Map(configMaps.map((c) => [namespacedName(c), c])), ledger: snapshot.secretLedger },
    selectable: { secrets: [...snapshot.secrets.values()], configMaps },
  };
  const policyObjects = snapshot.proxyPolicies;
  const resolvers = new Map<string, BackendResolver>();
  const resolverFor = (namespace: string, kind: string): BackendResolver => {
    const id = `${kind}/${namespace}`;
    let resolver = resolvers.get(id);
    if (!resolver) resolvers.set(id, (resolver = new BackendResolver(snapshot, namespace, { group: PROXY_POLICY.group, kind })));
    return resolver;
  };

  const targetWorld = { graph: world.graph, snapshot, ourRoutes: world.ourRoutes };
  const passMemo = world.passMemo;
  const resolveOne = (object: KubeObject, order: number): { policy: PolicyModel; targets: readonly ResolvedTarget[] } => {
    const resolver = resolverFor(namespaceOf(object), PROXY_POLICY.kind);
    const policy = passMemo ? passMemo.read(object, order, snapshot.secretLedger, resolver, () => readPolicy(object, order, inputs, resolver)) : readPolicy(object, order, inputs, resolver);
    const targets = passMemo ? passMemo.targets(policy, world.ourRoutes, () => resolveTargets(policy, targetWorld)) : resolveTargets(policy, targetWorld);
    return { policy, targets };
  };
  // Routes whose `<ns>/<name>` entry in ourRoutes may have changed since the previous pass: the patched ones (undefined after a whole route loop).
  const changedRoutes = world.patchedRoutes?.entries?.flatMap(({ was, now }) => [was.ourKey, now.ourKey].filter((key): key is string => key !== undefined));
  const resolved = passMemo ? passMemo.resolveAll(policyObjects, changedRoutes, snapshot.secretLedger, resolveOne, (namespace) => void resolverFor(namespace, PROXY_POLICY.kind)) : policyObjects.map(resolveOne);
  // The same policies with the same targets as the previous pass: the same attachments (its index when the models are the same too).
  const same = passMemo?.samePass(resolved.map((r) => r.policy), resolved.map((r) => r.targets));
  const index = same?.index ?? new AttachmentIndex();
  if (same?.index === undefined) for (const { policy, targets } of resolved) index.add(policy, targets);

  const inline = new Map<string, InlineBackendPolicy>();
  for (const [id, object] of snapshot.proxyBackends) {
    const read = readInlineBackendPolicies(object, inputs, resolverFor(namespaceOf(object), 'ProxyBackend'));
    const subBackends = subBackendNames(object);
    if (read) inline.set(id, { source: `ProxyBackend/${id}`, members: read.members, problems: read.problems, subBackends, ...(read.mcpAuthentication ? { mcpAuthentication: read.mcpAuthentication } : {}) });
    // Without spec.policies too: policies that target a provider or MCP target by sectionName still need the names.
    else if (subBackends.length > 0) inline.set(id, { source: `ProxyBackend/${id}`, members: {}, problems: [], subBackends });
  }

  const extraBackends = new Map<string, Backend>();
  for (const resolver of resolvers.values()) for (const [key, backend] of resolver.backends) if (!world.backends.has(key)) extraBackends.set(key, backend);
  if (index.isEmpty && inline.size === 0 && ![...world.backends.values()].some(hasOwnSubBackendPolicies)) {
    passMemo?.remember(undefined);
    const none = new OutcomeTracker();
    return { routes: new Map(world.routes), binds: [...world.binds], backends: extraBackends, statuses: statusesOf(resolved, () => none, world) };
  }
  passMemo?.remember({ models: resolved.map((r) => r.policy), targets: resolved.map((r) => r.targets), index });

  const memo = world.memo;
  const tracker = memo ? new RecordingTracker() : new OutcomeTracker();
  const places = { index, tracker, backends: Object.fromEntries(world.backends), inline };
  let routes = new Map<string, Route>();
  if (memo && tracker instanceof RecordingTracker) {
    memo.prepare(index);
    routes = memo.applyAll(world.routes, (key) => world.routeListeners.get(key) ?? NO_LISTENERS, places, tracker, world.patchedRoutes);
  } else {
    for (const [key, route] of world.routes) routes.set(key, applyToRoute(route, world.routeListeners.get(key) ?? [], places));
  }
  const binds = memo && tracker instanceof RecordingTracker ? memo.applyBinds(world.binds, places, tracker) : applyToBinds(world.binds, places);
  const endpointCalls: RecordingTracker['log'] = [];
  if (tracker instanceof RecordingTracker) tracker.log = endpointCalls;
  let backends: Map<string, Backend>;
  try {
    backends = withEndpointConnections(resolvers.values(), world.backends, extraBackends, places);
  } finally {
    if (tracker instanceof RecordingTracker) tracker.log = undefined;
  }
  // Recorded on every pass that gets here, so the comparison is always with the pass just before.
  const sameEndpointCalls = passMemo?.sameEndpointCalls(endpointCalls) ?? false;
  const dirty = memo && same !== undefined ? changedPolicies(memo.lastRun, sameEndpointCalls, world, same.changed) : undefined;
  // After a fast apply pass the tracker holds only the visited routes' calls: statuses get the outcomes replayed for the policies they rebuild.
  const outcomes = (policies: ReadonlySet<string> | undefined): OutcomeTracker => (memo && tracker instanceof RecordingTracker ? memo.outcomes(tracker, policies, endpointCalls) : tracker);
  return { routes, binds, backends, statuses: statusesOf(resolved, outcomes, world, dirty) };
}

/**
 * Which policies' statuses may differ from the previous pass's, when this pass has as many
 * policies (pass-memo.ts `samePass`): those whose policy object or targets changed, those named
 * by the tracker calls of every route result made anew (apply-memo.ts `lastRun`: the merge
 * outcomes through a target come only from calls), and those attached at a point whose reached
 * backend kinds a patched route may have changed (its (point, kind) pairs before and after
 * differ). Undefined (every status is rebuilt) when applyAll visited every route, the binds were
 * applied anew, or the policy endpoints' calls changed.
 */
function changedPolicies(run: ApplyMemo['lastRun'], sameEndpointCalls: boolean, world: PolicyWorld, changed: ReadonlySet<PolicyModel>): ((policy: PolicyModel, targets: readonly ResolvedTarget[]) => boolean) | undefined {
  const entries = world.patchedRoutes?.entries;
  if (!run.fast || run.bindsFresh || !sameEndpointCalls || entries === undefined) return undefined;
  const points = new Set<string>();
  for (const { was, now } of entries) {
    const before = was.result.route ? reachPairs(was.result.route, was.listeners, world.backends) : [];
    const after = now.result.route ? reachPairs(now.result.route, now.listeners, world.backends) : [];
    if (samePairs(before, after)) continue;
    for (const [key] of before) points.add(key);
    for (const [key] of after) points.add(key);
  }
  return (policy, targets) => changed.has(policy) || run.policies.has(policy.source) || (points.size > 0 && targets.some((t) => t.points.some((p) => points.has(p.key))));
}

function samePairs(a: readonly (readonly [string, string])[], b: readonly (readonly [string, string])[]): boolean {
  if (a.length !== b.length) return false;
  const seen = new Set(a.map(([key, kind]) => `${key}\u0000${kind}`));
  return b.every(([key, kind]) => seen.has(`${key}\u0000${kind}`)) && new Set(b.map(([key, kind]) => `${key}\u0000${kind}`)).size === seen.size;
}

/**
 * The backends to add or replace: those only policies name, plus every backend a policy endpoint
 * names (route backends too) with the connection members of its own backend policies
 * (external-services.ts). A policy endpoint inside a backend's own config (an AI provider's or a
 * ProxyModel's tunnel, an MCP target's) counts too: its backend joined the config with the route.
 */
function withEndpointConnections(resolvers: Iterable<BackendResolver>, routeBackends: ReadonlyMap<string, Backend>, extra: ReadonlyMap<string, Backend>, places: Parameters<typeof withConnectionPolicies>[1]): Map<string, Backend> {
  const named = new Map<string, Backend>();
  for (const resolver of resolvers) for (const [key, backend] of resolver.backends) named.set(key, routeBackends.get(key) ?? backend);
  for (const backend of routeBackends.values()) {
    if (!backend.ai && !backend.mcp) continue;
    backendReferences(backend, (key) => {
      const target = routeBackends.get(key);
      if (target && !named.has(key)) named.set(key, target);
    });
  }
  const out = new Map(extra);
  for (const backend of withConnectionPolicies(named.values(), places)) {
    if (backend.connection !== undefined || !routeBackends.has(backend.key)) out.set(backend.key, backend);
  }
  return out;
}

function statusesOf(resolved: readonly { policy: PolicyModel; targets: readonly ResolvedTarget[] }[], outcomes: (policies: ReadonlySet<string> | undefined) => OutcomeTracker, world: PolicyWorld, dirty?: (policy: PolicyModel, targets: readonly ResolvedTarget[]) => boolean): ObjectStatus[] {
  const memo = world.passMemo;
  // With `dirty`, a policy it does not name gets its previous status: nothing that status reads changed.
  const rebuilt = dirty && memo ? resolved.filter(({ policy, targets }) => dirty(policy, targets) || memo.keptStatus(policy) === undefined) : resolved;
  // Fields the data plane ignores on the kinds of backend each target reaches (status/not-applied.ts).
  const wanted = new Set<string>();
  for (const { targets } of rebuilt) for (const target of targets) for (const p of target.points) wanted.add(p.key);
  const reach = rebuilt.length === 0 ? new Map<string, Set<BackendKind>>() : reachedKinds(world.routes, world.routeListeners, world.backends, wanted);
  const rebuild = rebuilt === resolved ? undefined : new Set(rebuilt.map((r) => r.policy));
  const tracker = outcomes(rebuild === undefined ? undefined : new Set(rebuilt.map((r) => r.policy.source)));
  const build = (policy: Parameters<typeof policyStatus>[0], targets: Parameters<typeof policyStatus>[1]): ObjectStatus | undefined => {
    const status = policyStatus(policy, targets, tracker, world.controllerName);
    return status ? withNotApplied(status, policy, targets, reach, world.snapshot.proxyBackends) : undefined;
  };
  const out: ObjectStatus[] = [];
  for (const { policy, targets } of resolved) {
    if (rebuild !== undefined && !rebuild.has(policy)) {
      const kept = (memo as PolicyPassMemo).keptStatus(policy)?.status;
      if (kept) out.push(kept);
      continue;
    }
    const status = memo
      ? memo.status(policy, statusSignature(policy, targets, tracker, (target) => targetKinds(target, reach, world.snapshot.proxyBackends, policy.namespace), world.controllerName), () => build(policy, targets))
      : build(policy, targets);
    if (status) out.push(status);
  }
  return out;
}
