import { CORE_GROUP, GATEWAY_EXPERIMENTAL_GROUP, GATEWAY_GROUP, SWITCHBOARD_GROUP } from '../../../api/gateway/index.ts';
import type { KubeObject } from '../../../api/gateway/object.ts';
import type { GatewayGraph } from '../gateway.ts';
import type { ListenerModel } from '../listener.ts';
import { listenerSetId } from '../listenerset.ts';
import { isDict, listOf, stringRecord } from '../read.ts';
import { namespaceOf, type Snapshot } from '../snapshot.ts';
import type { Problem } from '../status/conditions.ts';
import type { PolicyModel, Section, TargetSpec } from './model.ts';

/**
 * Precedence levels, least specific first. Traffic uses Gateway..RouteRule, backend policies go
 * on to Service/ProxyBackend, the ProxyBackend's inline policies and, for one AI provider or MCP
 * target, that sub-backend's own inline `policies`; frontend uses Gateway and GatewayPort. A
 * ListenerSet as a whole sits between its Gateway and one named listener.
 */
export const LEVEL = { Gateway: 0, GatewayPort: 1, ListenerSet: 1, Listener: 2, Route: 3, RouteRule: 4, Backend: 5, BackendSection: 6, Inline: 7, SubBackendInline: 8 } as const;

/** Attachment point keys. */
export const point = {
  gateway: (gw: { namespace: string; name: string }) => `gateway/${gw.namespace}/${gw.name}`,
  gatewayPort: (gw: { namespace: string; name: string }, port: number) => `gateway/${gw.namespace}/${gw.name}:${port}`,
  listener: (listenerKey: string) => `listener/${listenerKey}`,
  route: (routeKey: string) => `route/${routeKey}`,
  rule: (routeKey: string, ruleName: string) => `rule/${routeKey}/${ruleName}`,
  service: (namespace: string, name: string, port?: number) => `service/${namespace}/${name}${port === undefined ? '' : `:${port}`}`,
  backend: (namespace: string, name: string, section?: string) => `backend/${namespace}/${name}${section === undefined ? '' : `/${section}`}`,
};

/** One resolved target: an ancestor for status and the points the policy attaches to through it. */
export interface ResolvedTarget {
  readonly ancestorRef: Readonly<Record<string, unknown>>;
  readonly points: readonly { readonly key: string; readonly level: number; readonly sections: readonly Section[] }[];
  readonly problem?: Problem;
}

/** What target resolution needs: our Gateways and routes, and every object that can be targeted. */
export interface TargetWorld {
  readonly graph: GatewayGraph;
  readonly snapshot: Snapshot;
  /** HTTPRoutes with at least one parentRef to our Gateways, by `<ns>/<name>`. */
  readonly ourRoutes: ReadonlyMap<string, KubeObject>;
}

const LISTENER_SET_GROUPS: Record<string, string> = { ListenerSet: GATEWAY_GROUP, XListenerSet: GATEWAY_EXPERIMENTAL_GROUP };
const TRAFFIC_AND_BACKEND: readonly Section[] = ['traffic', 'backend'];

/** Every target of a policy; targets of other controllers' Gateways (and their routes) are left out. */
export function resolveTargets(policy: PolicyModel, world: TargetWorld): ResolvedTarget[] {
  const out: ResolvedTarget[] = [];
  for (const target of policy.targets) {
    if (target.name !== undefined) {
      const resolved = resolveNamed(target, target.name, policy.namespace, world);
      if (resolved) out.push(resolved);
      continue;
    }
    for (const name of selectNames(target, policy.namespace, world)) {
      const resolved = resolveNamed(target, name, policy.namespace, world);
      if (resolved) out.push(resolved);
    }
  }
  return out;
}

function ancestor(target: TargetSpec, name: string, namespace: string): Record<string, unknown> {
  return {
    group: target.group, kind: target.kind, namespace, name,
    ...(target.sectionName !== undefined ? { sectionName: target.sectionName } : {}),
    ...(target.port !== undefined ? { port: target.port } : {}),
  };
}

function resolveNamed(target: TargetSpec, name: string, namespace: string, world: TargetWorld): ResolvedTarget | undefined {
  const ancestorRef = ancestor(target, name, namespace);
  const notFound = (message: string): ResolvedTarget => ({ ancestorRef, points: [], problem: { reason: 'TargetNotFound', message } });
  const id = `${namespace}/${name}`;
  const { group, kind, sectionName, port } = target;
  if (group === GATEWAY_GROUP && kind === 'Gateway') {
    if (world.graph.foreignGateways.has(id)) return undefined;
    const gateway = world.graph.gateways.get(id);
    if (!gateway) return notFound(`Gateway ${id} not found`);
    const gw = { namespace, name };
    if (sectionName !== undefined) {
      const listener = gateway.listeners.find((l) => l.name === sectionName);
      if (!listener) return notFound(`Gateway ${id} has no listener named ${sectionName}`);
      return { ancestorRef, points: [{ key: point.listener(listener.key), level: LEVEL.Listener, sections: TRAFFIC_AND_BACKEND }] };
    }
    if (port !== undefined) {
      if (!gateway.listeners.some((l) => l.port === port)) return notFound(`Gateway ${id} has no listener on port ${port}`);
      return { ancestorRef, points: [{ key: point.gatewayPort(gw, port), level: LEVEL.GatewayPort, sections: ['frontend'] }] };
    }
    return { ancestorRef, points: [{ key: point.gateway(gw), level: LEVEL.Gateway, sections: ['frontend', 'traffic', 'backend'] }] };
  }
  if (LISTENER_SET_GROUPS[kind] === group) {
    const setId = listenerSetId(group, kind, namespace, name);
    if (world.graph.foreignListenerSets.has(setId)) return undefined;
    const set = world.graph.listenerSets.get(setId);
    if (!set) return notFound(`${kind} ${id} not found`);
    const listeners: readonly ListenerModel[] = sectionName === undefined ? set.listeners : set.listeners.filter((l) => l.name === sectionName);
    if (sectionName !== undefined && listeners.length === 0) return notFound(`${kind} ${id} has no listener named ${sectionName}`);
    const level = sectionName === undefined ? LEVEL.ListenerSet : LEVEL.Listener;
    return { ancestorRef, points: listeners.map((l) => ({ key: point.listener(l.key), level, sections: TRAFFIC_AND_BACKEND })) };
  }
  if (group === GATEWAY_GROUP && kind === 'HTTPRoute') {
    const route = world.ourRoutes.get(id);
    if (!route) return world.snapshot.httpRoutes.some((r) => `${namespaceOf(r)}/${r.metadata.name}` === id) ? undefined : notFound(`HTTPRoute ${id} not found`);
    if (sectionName === undefined) return { ancestorRef, points: [{ key: point.route(id), level: LEVEL.Route, sections: TRAFFIC_AND_BACKEND }] };
    const spec = isDict(route.spec) ? route.spec : {};
    if (!listOf<{ name?: unknown }>(spec.rules).some((r) => r.name === sectionName)) return notFound(`HTTPRoute ${id} has no rule named ${sectionName}`);
    return { ancestorRef, points: [{ key: point.rule(id, sectionName), level: LEVEL.RouteRule, sections: TRAFFIC_AND_BACKEND }] };
  }
  if (group === CORE_GROUP && kind === 'Service') {
    const service = world.snapshot.services.get(id);
    if (!service) return notFound(`Service ${id} not found`);
    if (sectionName === undefined) return { ancestorRef, points: [{ key: point.service(namespace, name), level: LEVEL.Backend, sections: ['backend'] }] };
    const spec = isDict(service.spec) ? service.spec : {};
    const servicePort = /^[0-9]+$/.test(sectionName) ? Number(sectionName) : Number.NaN;
    if (!listOf<{ port?: unknown }>(spec.ports).some((p) => p.port === servicePort)) return notFound(`Service ${id} has no port ${sectionName} (sectionName is the numeric port)`);
    return { ancestorRef, points: [{ key: point.service(namespace, name, servicePort), level: LEVEL.BackendSection, sections: ['backend'] }] };
  }
  if (group === SWITCHBOARD_GROUP && kind === 'ProxyBackend') {
    const backend = world.snapshot.proxyBackends.get(id);
    if (!backend) return notFound(`ProxyBackend ${id} not found`);
    if (sectionName === undefined) return { ancestorRef, points: [{ key: point.backend(namespace, name), level: LEVEL.Backend, sections: ['backend'] }] };
    if (!subBackendNames(backend).includes(sectionName)) return notFound(`ProxyBackend ${id} has no sub-backend (AI provider or MCP target) named ${sectionName}`);
    return { ancestorRef, points: [{ key: point.backend(namespace, name, sectionName), level: LEVEL.BackendSection, sections: ['backend'] }] };
  }
  return { ancestorRef, points: [], problem: { reason: 'Invalid', message: `${group ? `${group}/` : ''}${kind} cannot be a policy target; targets are Gateway, ListenerSet, HTTPRoute, Service and ProxyBackend` } };
}

/** Names of a ProxyBackend's sub-backends: AI providers in groups and MCP targets. */
export function subBackendNames(backend: KubeObject): string[] {
  const spec = isDict(backend.spec) ? backend.spec : {};
  const ai = isDict(spec.ai) ? spec.ai : {};
  const mcp = isDict(spec.mcp) ? spec.mcp : {};
  const providers = listOf<{ providers?: unknown }>(ai.groups).flatMap((g) => listOf<{ name?: unknown }>(g.providers));
  return [...providers, ...listOf<{ name?: unknown }>(mcp.targets)].flatMap((s) => (typeof s.name === 'string' ? [s.name] : []));
}

/** Names of same-namespace objects of the target's kind whose labels include matchLabels. */
function selectNames(target: TargetSpec, namespace: string, world: TargetWorld): string[] {
  const candidates = (): readonly KubeObject[] => {
    const { group, kind } = target;
    if (group === GATEWAY_GROUP && kind === 'Gateway') return [...world.graph.gateways.values()].map((g) => g.object);
    if (LISTENER_SET_GROUPS[kind] === group) return [...world.graph.listenerSets.values()].map((s) => s.object).filter((o) => o.kind === kind);
    if (group === GATEWAY_GROUP && kind === 'HTTPRoute') return [...world.ourRoutes.values()];
    if (group === CORE_GROUP && kind === 'Service') return [...world.snapshot.services.values()];
    if (group === SWITCHBOARD_GROUP && kind === 'ProxyBackend') return [...world.snapshot.proxyBackends.values()];
    return [];
  };
  const wanted = Object.entries(target.matchLabels ?? {});
  return candidates()
    .filter((o) => namespaceOf(o) === namespace)
    .filter((o) => {
      const labels = stringRecord(o.metadata.labels);
      return wanted.every(([k, v]) => labels[k] === v);
    })
    .map((o) => o.metadata.name)
    .sort();
}
