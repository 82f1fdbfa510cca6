import { GATEWAY_GROUP, type AllowedRoutes, type Listener as ListenerSpec, type RouteGroupKind } from '../../api/gateway/index.ts';
import type { ListenerTLS } from '../../ir/types.ts';
import { resolveListenerTls } from './listener-tls.ts';
import { isDict, isPort, listOf } from './read.ts';
import { selectorMatches } from './selector.ts';
import { gatewaySessionKey } from './session-key.ts';
import type { Snapshot } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

/** The object that declares listeners: a Gateway or a ListenerSet. */
export interface ListenerOwner {
  readonly apiVersion: string;
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly generation: number | undefined;
}

/** One listener as the translator reasons about it, before and after conflict detection. */
export interface ListenerModel {
  readonly key: string;
  readonly owner: ListenerOwner;
  readonly gateway: { readonly namespace: string; readonly name: string };
  readonly name: string;
  readonly port: number;
  readonly protocol: 'HTTP' | 'HTTPS';
  readonly hostname: string | null;
  /** Problems for the Accepted condition; a listener with any is not served. */
  readonly accepted: readonly Problem[];
  /** Problems for the ResolvedRefs condition. */
  readonly refs: readonly Problem[];
  readonly supportedKinds: readonly Required<RouteGroupKind>[];
  readonly certificates: ListenerTLS['certificates'];
  /** The Gateway's MCP session key (session-key.ts), when its Secret holds a valid one. */
  readonly sessionKey: string | undefined;
  readonly allowsRoutesFrom: (namespace: string) => boolean;
  /** Set by conflict detection: a listener that conflicts with another on its port is not served. */
  conflict?: Problem;
  /** Counted while routes attach. */
  attachedRoutes: number;
}

const HTTP_ROUTE: Required<RouteGroupKind> = { group: GATEWAY_GROUP, kind: 'HTTPRoute' };

export function isProgrammed(listener: ListenerModel): boolean {
  return listener.accepted.length === 0 && !listener.conflict && (listener.protocol === 'HTTP' || listener.certificates.length > 0);
}

/** Listener key in the IR: `<gwNs>/<gwName>/<section>`, or with `/listenerset/<ns>/<name>` for ListenerSet entries. */
export function listenerKey(owner: ListenerOwner, gateway: { namespace: string; name: string }, name: string): string {
  const base = `${gateway.namespace}/${gateway.name}`;
  return owner.kind === 'Gateway' ? `${base}/${name}` : `${base}/listenerset/${owner.namespace}/${owner.name}/${name}`;
}

/** Build the models for an owner's listeners; entries without a usable name are skipped, duplicate names keep the first. */
export function buildListeners(owner: ListenerOwner, gateway: { namespace: string; name: string }, specs: unknown, snapshot: Snapshot): ListenerModel[] {
  const seen = new Set<string>();
  const out: ListenerModel[] = [];
  listOf<ListenerSpec>(specs).forEach((spec, i) => {
    if (typeof spec.name !== 'string' || spec.name === '' || seen.has(spec.name)) return;
    seen.add(spec.name);
    out.push(buildListener(owner, gateway, spec, `spec.listeners[${i}]`, snapshot));
  });
  return out;
}

function buildListener(owner: ListenerOwner, gateway: { namespace: string; name: string }, spec: ListenerSpec, path: string, snapshot: Snapshot): ListenerModel {
  const accepted: Problem[] = [];
  const refs: Problem[] = [];
  let certificates: ListenerTLS['certificates'] = [];
  const protocol = spec.protocol;
  const supportedProtocol = protocol === 'HTTP' || protocol === 'HTTPS';
  if (!supportedProtocol) accepted.push({ reason: 'UnsupportedProtocol', message: `${path}.protocol ${String(protocol)} is not supported; supported protocols are HTTP and HTTPS` });
  if (!isPort(spec.port)) accepted.push({ reason: 'PortUnavailable', message: `${path}.port must be an integer 1..65535` });
  if (protocol === 'HTTPS') {
    const tls = resolveListenerTls(spec.tls, path, { group: owner.group, kind: owner.kind, namespace: owner.namespace }, snapshot);
    accepted.push(...tls.accepted);
    refs.push(...tls.refs);
    certificates = tls.certificates;
  }
  const kinds = supportedProtocol ? routeKinds(spec.allowedRoutes, path) : { supported: [], problems: [] };
  refs.push(...kinds.problems);
  return {
    key: listenerKey(owner, gateway, spec.name),
    owner,
    gateway,
    name: spec.name,
    port: isPort(spec.port) ? spec.port : 0,
    protocol: protocol === 'HTTPS' ? 'HTTPS' : 'HTTP',
    hostname: typeof spec.hostname === 'string' && spec.hostname !== '' ? spec.hostname.toLowerCase() : null,
    accepted,
    refs,
    supportedKinds: kinds.supported,
    certificates,
    sessionKey: gatewaySessionKey(gateway, snapshot),
    allowsRoutesFrom: routeNamespacePolicy(spec.allowedRoutes, owner.namespace, snapshot),
    attachedRoutes: 0,
  };
}

function routeKinds(allowed: AllowedRoutes | undefined, path: string): { supported: Required<RouteGroupKind>[]; problems: Problem[] } {
  if (!isDict(allowed) || allowed.kinds === undefined) return { supported: [HTTP_ROUTE], problems: [] };
  const supported: Required<RouteGroupKind>[] = [];
  const problems: Problem[] = [];
  listOf<RouteGroupKind>(allowed.kinds).forEach((k, i) => {
    const group = k.group ?? GATEWAY_GROUP;
    if (group === GATEWAY_GROUP && k.kind === 'HTTPRoute') {
      if (supported.length === 0) supported.push(HTTP_ROUTE);
    } else {
      problems.push({ reason: 'InvalidRouteKinds', message: `${path}.allowedRoutes.kinds[${i}]: ${group}/${String(k.kind)} is not supported; only ${GATEWAY_GROUP}/HTTPRoute is` });
    }
  });
  return { supported, problems };
}

/**
 * allowedRoutes.namespaces: Same (the default), All, or Selector over Namespace labels. Each
 * policy is made by its own function: closures made in one scope share its context, and a
 * listener outlives its translation (memoized route entries hold it) — a `Same` closure that
 * shared a scope with `snapshot` kept every edit's whole snapshot alive (issue 15).
 */
function routeNamespacePolicy(allowed: AllowedRoutes | undefined, ownNamespace: string, snapshot: Snapshot): (namespace: string) => boolean {
  const namespaces = isDict(allowed) && isDict(allowed.namespaces) ? allowed.namespaces : {};
  switch (namespaces.from ?? 'Same') {
    case 'All': return allowsAll;
    case 'Selector': return isDict(namespaces.selector) ? selectedNamespaces(namespaces.selector, snapshot.namespaceLabels) : allowsNone;
    case 'Same': return sameNamespace(ownNamespace);
    default: return allowsNone;
  }
}

const allowsAll = (): boolean => true;
const allowsNone = (): boolean => false;

function sameNamespace(ownNamespace: string): (namespace: string) => boolean {
  return (ns) => ns === ownNamespace;
}

function selectedNamespaces(selector: Parameters<typeof selectorMatches>[0], labelsOf: Snapshot['namespaceLabels']): (namespace: string) => boolean {
  return (ns) => selectorMatches(selector, labelsOf(ns));
}
