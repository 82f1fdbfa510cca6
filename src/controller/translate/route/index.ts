import type { HTTPRouteRule, ParentReference } from '../../../api/gateway/index.ts';
import type { Condition, KubeObject, ObjectStatus } from '../../../api/gateway/object.ts';
import type { Backend, Route, RouteRule } from '../../../ir/types.ts';
import { BackendResolver } from '../backend.ts';
import type { GatewayGraph } from '../gateway.ts';
import { canonicalJson } from '../hash.ts';
import { isProgrammed, type ListenerModel } from '../listener.ts';
import { isDict, listOf } from '../read.ts';
import { creationOf, generationOf, namespaceOf, type Snapshot } from '../snapshot.ts';
import { condition, conditionFrom, type Problem } from '../status/conditions.ts';
import { attachToParent, type Attachment } from './parents.ts';
import { translateRule } from './rule.ts';

export interface RouteResult {
  /** Absent when no parentRef is ours. */
  readonly status?: ObjectStatus;
  /** Present when the route serves traffic on at least one programmed listener. */
  readonly route?: Route;
  /** Attachments to programmed listeners, for the binds. */
  readonly attachments: readonly Attachment[];
  readonly backends: ReadonlyMap<string, Backend>;
  /** Keys of the listeners whose attachedRoutes this route added one to (a memoized result replays them). */
  readonly counted: readonly string[];
}

/** Creation time of objects that carry none (file mode): the epoch, so they sort first and stay valid RFC 3339. */
const NO_CREATION_TIME = '1970-01-01T00:00:00Z';

export function translateHttpRoute(object: KubeObject, graph: GatewayGraph, snapshot: Snapshot, controllerName: string): RouteResult {
  const namespace = namespaceOf(object);
  const key = `${namespace}/${object.metadata.name}`;
  const spec = isDict(object.spec) ? object.spec : {};
  const hostnames = Array.isArray(spec.hostnames) ? spec.hostnames.filter((h): h is string => typeof h === 'string' && h !== '').map((h) => h.toLowerCase()) : [];

  const seenRefs = new Set<string>();
  const outcomes = listOf<ParentReference>(spec.parentRefs)
    .filter((ref) => {
      const id = canonicalJson(ref);
      if (seenRefs.has(id)) return false;
      seenRefs.add(id);
      return true;
    })
    .map((ref) => attachToParent(ref, namespace, hostnames, graph))
    .filter((o) => o !== undefined);
  if (outcomes.length === 0) return { attachments: [], backends: new Map(), counted: [] };

  const resolver = new BackendResolver(snapshot, namespace);
  // No rules means the Gateway API default: one rule matching every request (PathPrefix `/`).
  const written = listOf<HTTPRouteRule>(spec.rules);
  const ruleSpecs = written.length === 0 ? [{}] : written;
  const results = ruleSpecs.map((rule, i) => translateRule(rule, i, key, resolver, ruleSpecs.length));
  // Kept with the IR Route (memoized per route): at its length, not flatMap's room for 17 (~130 bytes a route).
  const rules = results.flatMap((r) => (r.rule ? [r.rule] : [])).slice();
  const invalid = results.flatMap((r) => r.invalid);
  const refs = results.flatMap((r) => r.refs);

  const generation = generationOf(object);
  const countedListeners = new Set<string>();
  let lastCounted: ListenerModel | undefined;
  const parents = outcomes.map((outcome) => {
    for (const { listener } of outcome.attachments) {
      if (countedListeners.has(listener.key)) continue;
      countedListeners.add(listener.key);
      lastCounted = listener;
      listener.attachedRoutes += 1;
    }
    return { parentRef: outcome.parentRef, controllerName, conditions: parentConditions(outcome.problem, rules, invalid, refs, generation) };
  });
  const status: ObjectStatus = { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata.name, namespace }, status: { parents } };

  const attachments = rules.length === 0 ? [] : outcomes.flatMap((o) => o.attachments).filter((a) => isProgrammed(a.listener));
  // Kept with the route's memoized result: a route counted on one listener holds that listener's one shared list.
  const counted = countedListeners.size === 1 && lastCounted !== undefined ? countedOn(lastCounted) : [...countedListeners];
  if (attachments.length === 0) return { status, attachments: [], backends: new Map(), counted };
  const route: Route = { key, namespace, name: object.metadata.name, creationTimestamp: creationOf(object) || NO_CREATION_TIME, rules };
  return { status, route, attachments, backends: resolver.backends, counted };
}

function parentConditions(problem: Problem | undefined, rules: readonly RouteRule[], invalid: readonly string[], refs: readonly Problem[], generation: number | undefined): Condition[] {
  const resolvedRefs = conditionFrom('ResolvedRefs', byReasonPriority(refs), 'ResolvedRefs', 'All references are resolved', generation);
  if (problem) return [condition('Accepted', false, problem.reason, problem.message, generation), resolvedRefs];
  if (rules.length === 0) return [condition('Accepted', false, 'UnsupportedValue', invalid.join('; '), generation), resolvedRefs];
  const accepted = condition('Accepted', true, 'Accepted', 'Route is accepted', generation);
  if (invalid.length === 0) return [accepted, resolvedRefs];
  return [accepted, resolvedRefs, condition('PartiallyInvalid', true, 'UnsupportedValue', `Invalid rules are dropped: ${invalid.join('; ')}`, generation)];
}

/** A condition carries one reason: lead with the one a user must act on first (a missing grant, then a wrong kind). */
const REASON_PRIORITY = ['RefNotPermitted', 'InvalidKind', 'BackendNotFound'];

function byReasonPriority(problems: readonly Problem[]): Problem[] {
  const rank = (p: Problem): number => {
    const i = REASON_PRIORITY.indexOf(p.reason);
    return i < 0 ? REASON_PRIORITY.length : i;
  };
  // Array.prototype.sort is stable, so messages keep their field order within a reason.
  return [...problems].sort((a, b) => rank(a) - rank(b));
}

/** `[listener.key]`, one array per listener model (10k routes on 10 listeners: 10 arrays, not 10k). */
const countedOnOne = new WeakMap<ListenerModel, readonly string[]>();

function countedOn(listener: ListenerModel): readonly string[] {
  let list = countedOnOne.get(listener);
  if (list === undefined) countedOnOne.set(listener, (list = Object.freeze([listener.key])));
  return list;
}
