/**
 * The backend policy member `mcp` (SPEC.md BackendMCP) lowered to its IR shape (McpPolicyIR), the
 * same way wherever it is written: a ProxyBackend's inline `spec.policies.mcp` or a ProxyPolicy's
 * `backend.mcp`. Authorization expressions are compiled here; guardrail processor endpoints become
 * gRPC base URLs. Problems are reported with the field path; the result is still returned (a rule
 * that does not compile is kept, and the proxy denies every item; an endpoint that does not
 * resolve is kept with an empty URL, so a FailClosed processor keeps rejecting).
 */
import type { BackendObjectReference, ServicePort } from '../../../api/gateway/index.ts';
import type { BackendResolver } from '../backend.ts';
import { compile } from '../../../cel/index.ts';
import type { McpAuthorizationRule, McpGuardrailIR, McpGuardrailPhase, McpPolicyIR } from '../../../ir/mcp.ts';
import { readyEndpoints } from '../endpoints.ts';
import { isDict, isPort, listOf, stringRecord, type Dict } from '../read.ts';
import type { Snapshot } from '../snapshot.ts';
import type { Problem } from '../status/conditions.ts';

export interface McpLowerEnv {
  /** The namespace of the object the member is written in (guardrail Services are looked up there). */
  readonly namespace: string;
  /** Undefined: a guardrail `backendRef` cannot be resolved (reported, URL left empty). */
  readonly snapshot: Snapshot | undefined;
  /** Default `cluster.local`. */
  readonly domain?: string;
  /**
   * Present where the member is written in a policy (ProxyPolicy, inline policies): a guardrail
   * Service backendRef is also resolved to its backend, which the proxy balances over.
   */
  readonly resolver?: BackendResolver;
}

const PHASES: readonly McpGuardrailPhase[] = ['Off', 'Request', 'Response', 'Full'];

/** `mcp` as written (`path` names it, e.g. `spec.backend.mcp`) → McpPolicyIR. */
export function lowerMcpPolicy(mcp: Dict, path: string, env: McpLowerEnv, report: (problem: Problem) => void): McpPolicyIR {
  const authorization = authorizationRules(mcp.authorization, `${path}.authorization`, report);
  const guardrails = guardrailProcessors(mcp.guardrails, `${path}.guardrails`, env, report);
  return {
    ...(authorization.length > 0 ? { authorization } : {}),
    ...(guardrails.length > 0 ? { guardrails } : {}),
  };
}

function authorizationRules(rule: unknown, path: string, report: (problem: Problem) => void): McpAuthorizationRule[] {
  if (!isDict(rule)) return [];
  const expressions = isDict(rule.policy) && Array.isArray(rule.policy.matchExpressions) ? rule.policy.matchExpressions.filter((e): e is string => typeof e === 'string') : [];
  for (const expression of expressions) {
    const compiled = compile(expression, { expect: ['bool'] });
    if (!compiled.ok) report({ reason: 'InvalidPolicy', message: `${path}: ${compiled.error.message} (the MCP backend denies every item)` });
  }
  const action = rule.action === 'Deny' || rule.action === 'Require' ? rule.action : 'Allow';
  return expressions.length > 0 ? [{ action, matchExpressions: expressions }] : [];
}

/**
 * `guardrails.processors` → McpGuardrailIR. A processor whose endpoint does not resolve is kept
 * with an empty URL: the proxy treats it as unavailable, so a FailClosed processor still rejects
 * what it guards instead of silently disappearing.
 */
function guardrailProcessors(guardrails: unknown, path: string, env: McpLowerEnv, report: (problem: Problem) => void): McpGuardrailIR[] {
  const out: McpGuardrailIR[] = [];
  listOf<Dict>(isDict(guardrails) ? guardrails.processors : undefined).forEach((processor, i) => {
    const at = `${path}.processors[${i}]`;
    const remote = isDict(processor.remote) ? processor.remote : {};
    const failureMode = remote.failureMode === 'FailOpen' ? 'FailOpen' : 'FailClosed';
    const url = guardrailUrl(remote, env, at, report);
    const backendKey = url !== undefined && env.resolver && isDict(remote.backendRef) ? env.resolver.resolve(remote.backendRef as unknown as BackendObjectReference, `${at}.remote.backendRef`).backendKey : null;
    const methods: Record<string, McpGuardrailPhase> = {};
    for (const [method, phase] of Object.entries(isDict(processor.methods) ? processor.methods : {})) {
      if (PHASES.includes(phase as McpGuardrailPhase)) methods[method] = phase as McpGuardrailPhase;
      else report({ reason: 'Invalid', message: `${at}.methods[${method}] must be one of ${PHASES.join(', ')}` });
    }
    const metadata = stringRecord(remote.metadata);
    for (const [name, expression] of Object.entries(metadata)) {
      const compiled = compile(expression);
      if (!compiled.ok) report({ reason: 'InvalidPolicy', message: `${at}.remote.metadata[${name}]: ${compiled.error.message} (the processor fails every message)` });
    }
    const headers = (value: unknown): string[] => (Array.isArray(value) ? (value as unknown[]) : []).filter((h): h is string => typeof h === 'string').map((h) => h.toLowerCase());
    const allowed = headers(remote.allowedRequestHeaders);
    const disallowed = headers(remote.disallowedRequestHeaders);
    out.push({
      url: url ?? '', failureMode, methods,
      ...(backendKey !== null ? { backendKey } : {}),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      ...(allowed.length > 0 ? { allowedRequestHeaders: allowed } : {}),
      ...(disallowed.length > 0 ? { disallowedRequestHeaders: disallowed } : {}),
    });
  });
  return out;
}

function guardrailUrl(remote: Dict, env: McpLowerEnv, path: string, report: (problem: Problem) => void): string | undefined {
  const { namespace, snapshot } = env;
  if (typeof remote.url === 'string' && remote.url !== '') {
    try {
      const url = new URL(remote.url);
      return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      report({ reason: 'Invalid', message: `${path}.remote.url is not a URL` });
      return undefined;
    }
  }
  const ref = isDict(remote.backendRef) ? remote.backendRef : undefined;
  if (!ref || typeof ref.name !== 'string') {
    report({ reason: 'Invalid', message: `${path}.remote needs one of backendRef or url` });
    return undefined;
  }
  const refNamespace = typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : namespace;
  if (refNamespace !== namespace) {
    report({ reason: 'RefNotPermitted', message: `${path}.remote.backendRef: only Services in the backend's namespace are supported` });
    return undefined;
  }
  const service = snapshot?.services.get(`${namespace}/${ref.name}`);
  if (!snapshot || !service || (ref.kind !== undefined && ref.kind !== 'Service')) {
    report({ reason: 'BackendNotFound', message: `${path}.remote.backendRef: Service ${namespace}/${ref.name} not found` });
    return undefined;
  }
  if (!isPort(ref.port)) {
    report({ reason: 'Invalid', message: `${path}.remote.backendRef.port is required for a Service` });
    return undefined;
  }
  // A ready endpoint when the Service has them (embedded mode has no cluster DNS); the Service's
  // DNS name otherwise (ExternalName, or a cluster that resolves it).
  const servicePort = listOf<ServicePort>(isDict(service.spec) ? service.spec.ports : undefined).find((p) => p.port === ref.port);
  const first = servicePort ? readyEndpoints(service, servicePort, snapshot)[0] : undefined;
  if (first) return `http://${first.host.includes(':') ? `[${first.host}]` : first.host}:${first.port}`;
  return `http://${ref.name}.${namespace}.svc.${env.domain ?? 'cluster.local'}:${ref.port}`;
}
