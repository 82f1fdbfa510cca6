/**
 * Backends named by a policy endpoint (`backendRef` of extAuth, extProc, the global rate-limit
 * service, remote JWKS, OTLP export, tracing, a backend `tunnel`, OAuth token endpoints, MCP
 * guardrails and prompt-guard webhooks) are called by the gateway itself, not routed to. SPEC.md
 * attaches backend policies to Services and ProxyBackends, so such a call honours the connection
 * members (`tcp`, `tls`, `http`) of the policies attached to that Service (or port of it) or
 * ProxyBackend, and a ProxyBackend's own inline ones. Gateway, route and rule policies do not
 * apply: the call belongs to no route.
 */
import type { BackendConnectionPolicy, Backend } from '../../../ir/types.ts';
import type { InvalidPolicy } from '../../../ir/policy.ts';
import type { PolicyPlaces } from './apply.ts';
import { mergeMembers, type Contribution } from './merge.ts';
import { LEVEL, point } from './targets.ts';

const CONNECTION_MEMBERS = ['tcp', 'tls', 'http'] as const;

/** Attachment keys of a backend itself: a Service (all ports, then its port), or a ProxyBackend. */
export function backendPoints(backend: Backend): string[] {
  if (backend.kind !== 'Service') return [point.backend(backend.namespace, backend.name)];
  const port = Number(backend.key.slice(backend.key.lastIndexOf(':') + 1));
  return [point.service(backend.namespace, backend.name), point.service(backend.namespace, backend.name, port)];
}

/**
 * Each backend with `connection` set when backend policies attached to it set tcp, tls or http
 * (or one that would have did not translate); unchanged backends are returned as they are.
 */
export function withConnectionPolicies(backends: Iterable<Backend>, places: Pick<PolicyPlaces, 'index' | 'tracker' | 'inline'>): Backend[] {
  const out: Backend[] = [];
  for (const backend of backends) {
    const connection = connectionPolicy(backend, places);
    out.push(connection ? { ...backend, connection } : backend);
  }
  return out;
}

function connectionPolicy(backend: Backend, places: Pick<PolicyPlaces, 'index' | 'tracker' | 'inline'>): BackendConnectionPolicy | undefined {
  const { contributions, invalid } = places.index.gather(backendPoints(backend), 'backend');
  const all: Contribution[] = [...contributions];
  const problems: InvalidPolicy[] = [...invalid];
  const inline = backend.kind === 'ProxyBackend' ? places.inline.get(`${backend.namespace}/${backend.name}`) : undefined;
  if (inline) {
    if (inline.problems.length > 0) problems.push({ source: inline.source, message: inline.problems.join('; ') });
    else all.push({ source: inline.source, level: LEVEL.Inline, order: 0, override: false, members: inline.members });
  }
  const { members } = mergeMembers(all, CONNECTION_MEMBERS, places.tracker);
  if (Object.keys(members).length === 0 && problems.length === 0) return undefined;
  return { ...(members as BackendConnectionPolicy), ...(problems.length > 0 ? { invalid: problems } : {}) };
}
