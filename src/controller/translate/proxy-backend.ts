import { isIP } from 'node:net';
import type { Condition, KubeObject } from '../../api/gateway/object.ts';
import type { Backend } from '../../ir/types.ts';
import { aiBackend } from './ai-backend.ts';
import { translateMcpBackend } from './mcp-backend.ts';
import { translateDynamicForward } from './dynamic-forward-backend.ts';
import { translateAgentRuntime } from './agent-runtime-backend.ts';
import { isDict, isPort, type Dict } from './read.ts';
import { generationOf, namespaceOf, type Snapshot } from './snapshot.ts';
import { condition } from './status/conditions.ts';
import { unservedBackendType } from './status/unapplied-objects.ts';

/**
 * A ProxyBackend as the IR serves it, or why it cannot serve, plus its `Accepted` condition.
 * One translator per backend type; a type without one is reported, never silently dropped.
 */
export interface ProxyBackendTranslation {
  readonly backend?: Backend;
  /** Why the backend cannot be used as a backendRef target (undefined when `backend` is set). */
  readonly problem?: string;
  readonly conditions: readonly Condition[];
  /** Backends the type's own config names (an AI provider's tunnel Service), published with this one. */
  readonly named?: ReadonlyMap<string, Backend>;
}

type TypeTranslator = (object: KubeObject, spec: Dict, snapshot: Snapshot, base: BackendBase) => ProxyBackendTranslation;

interface BackendBase {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly generation: number | undefined;
}

const TYPES: Readonly<Record<string, TypeTranslator>> = {
  static: staticBackend,
  mcp: mcpBackend,
  ai: aiBackend,
  dynamicForwardProxy: dynamicForwardBackend,
  a2a: a2aBackend,
  cloudA: agentRuntimeBackend,
};

const ONE_OF = ['ai', 'static', 'dynamicForwardProxy', 'mcp', 'cloudA', 'a2a'];

export function translateProxyBackend(object: KubeObject, snapshot: Snapshot): ProxyBackendTranslation {
  const namespace = namespaceOf(object);
  const base: BackendBase = { key: `backend/${namespace}/${object.metadata.name}`, namespace, name: object.metadata.name, generation: generationOf(object) };
  const spec = isDict(object.spec) ? object.spec : {};
  const types = ONE_OF.filter((t) => spec[t] !== undefined);
  if (types.length !== 1) {
    const message = types.length === 0 ? `spec: exactly one of ${ONE_OF.join(', ')} must be set` : `spec: exactly one of ${ONE_OF.join(', ')} must be set, found ${types.join(' and ')}`;
    return invalid(message, base);
  }
  const translator = TYPES[types[0]];
  if (!translator) {
    const unserved = unservedBackendType(types[0]) ?? { reason: 'Invalid', message: `spec.${types[0]} is not supported yet by this gateway` };
    return { problem: unserved.message, conditions: [condition('Accepted', false, unserved.reason, unserved.message, base.generation)] };
  }
  return translator(object, spec, snapshot, base);
}

function invalid(problem: string, base: BackendBase): ProxyBackendTranslation {
  return { problem, conditions: [condition('Accepted', false, 'Invalid', problem, base.generation)] };
}

function staticBackend(_object: KubeObject, spec: Dict, _snapshot: Snapshot, base: BackendBase): ProxyBackendTranslation {
  if (!isDict(spec.static)) return invalid('spec.static must be an object', base);
  const { host, port } = spec.static;
  if (typeof host !== 'string' || host.length < 1 || host.length > 256) return invalid('spec.static.host must be a string of 1..256 characters', base);
  if (!isPort(port)) return invalid('spec.static.port must be an integer 1..65535', base);
  // A DNS name usually serves virtual hosts: send it its own name. IPs take the client's Host.
  const backend: Backend = { key: base.key, kind: 'ProxyBackend', namespace: base.namespace, name: base.name, endpoints: [{ host, port }], rewriteHost: isIP(host) === 0 };
  return { backend, conditions: [condition('Accepted', true, 'Accepted', 'Static backend is accepted', base.generation)] };
}

/** The well-known agent card paths (A2A v0.3/v1.0 and the older name), answered with URLs rewritten to the gateway. */
export const A2A_CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;

function a2aBackend(_object: KubeObject, spec: Dict, _snapshot: Snapshot, base: BackendBase): ProxyBackendTranslation {
  if (!isDict(spec.a2a)) return invalid('spec.a2a must be an object', base);
  const { host, port } = spec.a2a;
  if (typeof host !== 'string' || host.length < 1 || host.length > 256) return invalid('spec.a2a.host must be a string of 1..256 characters', base);
  if (!isPort(port)) return invalid('spec.a2a.port must be an integer 1..65535', base);
  // Forwarded like a static host (every traffic and backend policy applies on the one path); the card is rewritten on its way back.
  const backend: Backend = {
    key: base.key, kind: 'ProxyBackend', namespace: base.namespace, name: base.name, endpoints: [{ host, port }], rewriteHost: isIP(host) === 0,
    a2a: { cardPaths: [...A2A_CARD_PATHS] },
  };
  return { backend, conditions: [condition('Accepted', true, 'Accepted', 'A2A backend is accepted', base.generation)] };
}

function mcpBackend(object: KubeObject, _spec: Dict, snapshot: Snapshot, base: BackendBase): ProxyBackendTranslation {
  const { ir, problems, conditions, named } = translateMcpBackend(object, snapshot);
  if (!ir) return { problem: problems.map((p) => p.message).join('; '), conditions };
  // The MCP handler reaches its targets itself; the backend has no endpoints of its own.
  const backend: Backend = { key: base.key, kind: 'ProxyBackend', namespace: base.namespace, name: base.name, endpoints: [], rewriteHost: false, mcp: ir };
  return { backend, conditions, ...(named.size > 0 ? { named } : {}) };
}

function dynamicForwardBackend(_object: KubeObject, spec: Dict, _snapshot: Snapshot, base: BackendBase): ProxyBackendTranslation {
  const translated = translateDynamicForward(spec, base.generation);
  if (!translated.ir) return { problem: translated.problem, conditions: translated.conditions };
  // The forward handler picks each request's destination itself: no endpoints of its own.
  const backend: Backend = { key: base.key, kind: 'ProxyBackend', namespace: base.namespace, name: base.name, endpoints: [], rewriteHost: false, dynamicForward: translated.ir };
  return { backend, conditions: translated.conditions };
}

function agentRuntimeBackend(_object: KubeObject, spec: Dict, _snapshot: Snapshot, base: BackendBase): ProxyBackendTranslation {
  const translated = translateAgentRuntime(spec, base.generation);
  if (!translated.ir) return { problem: translated.problem, conditions: translated.conditions };
  // The agent-runtime handler reaches the runtime's regional endpoint itself: no endpoints of its own.
  const backend: Backend = { key: base.key, kind: 'ProxyBackend', namespace: base.namespace, name: base.name, endpoints: [], rewriteHost: false, agentRuntime: translated.ir };
  return { backend, conditions: translated.conditions };
}
