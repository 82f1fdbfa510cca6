import { SWITCHBOARD_GROUP, type ServicePort } from '../../api/gateway/index.ts';
import type { Condition, KubeObject } from '../../api/gateway/object.ts';
import type { McpBackendIR, McpTargetIR, McpTransport } from '../../ir/mcp.ts';
import type { BackendMember, BackendPolicy } from '../../ir/policy.ts';
import type { Backend, Endpoint } from '../../ir/types.ts';
import { BackendResolver } from './backend.ts';
import { readyEndpoints } from './endpoints.ts';
import { lowerBackend, lowerMcpAuthentication } from './policy/members.ts';
import { lowerMcpPolicy } from './policy/mcp-member.ts';
import { isDict, isPort, listOf, stringRecord, type Dict } from './read.ts';
import { selectorMatches } from './selector.ts';
import { generationOf, namespaceOf, type Snapshot } from './snapshot.ts';
import { conditionFrom, type Problem } from './status/conditions.ts';

export const MCP_AUTHENTICATION_DEPRECATED = 'spec.policies.mcp.authentication is deprecated: it is enforced as a traffic jwtAuthentication (with mcp) on the routes that use this backend, unless the route has its own; move it to a ProxyPolicy traffic.jwtAuthentication.mcp';

/**
 * ProxyBackend `spec.mcp` (+ `spec.policies.mcp.authorization`) → McpBackendIR. Pure: a user's
 * mistake becomes a Problem for the backend's Accepted condition; the targets that resolve are
 * still served. No IR when no target resolves.
 *
 * Service targets are named by the Service's cluster DNS name (`<svc>.<ns>.svc.<domain>`) and
 * carry the ready endpoints of the Service port, resolved from EndpointSlices exactly as route
 * backends are (endpoints.ts), so the proxy can pin a session to one replica; without ready
 * endpoints (or for an ExternalName Service) the DNS name is what the proxy connects to.
 * Selector targets are named `<name>-<service>-<port>` (`<name>-<namespace>-<service>-<port>`
 * for Services in another namespace), one per Service port, in a stable order.
 */
export interface McpTranslation {
  readonly ir?: McpBackendIR;
  /** Every problem found (targets that resolved are still in the IR). */
  readonly problems: readonly Problem[];
  /** The backend's `Accepted` condition summarising `problems`. */
  readonly conditions: readonly Condition[];
  /** Backends the targets' own policies name (a tunnel's Service), published with this backend. */
  readonly named: ReadonlyMap<string, Backend>;
}

export interface McpTranslateOptions {
  /** Default `cluster.local`. */
  readonly clusterDomain?: string;
}

const DEFAULT_PATH: Readonly<Record<McpTransport, string>> = { StreamableHTTP: '/mcp', SSE: '/sse' };

export function translateMcpBackend(backend: KubeObject, snapshot: Snapshot, opts: McpTranslateOptions = {}): McpTranslation {
  const named = new Map<string, Backend>();
  const { ir, problems } = translate(backend, snapshot, opts, named);
  const accepted = conditionFrom('Accepted', problems, 'Accepted', 'MCP backend accepted', generationOf(backend));
  // The deprecated authentication is served (the policy translator maps it); the condition says so.
  const deprecated = ir !== undefined && isDict(backend.spec) && isDict(backend.spec.policies) && isDict(backend.spec.policies.mcp) && backend.spec.policies.mcp.authentication !== undefined;
  const conditions = [deprecated ? { ...accepted, message: `${accepted.message}; ${MCP_AUTHENTICATION_DEPRECATED}` } : accepted];
  return ir ? { ir, problems, conditions, named } : { problems, conditions, named: new Map() };
}

/**
 * Problems of the deprecated authentication, found by lowering it exactly as the policy
 * translator does (which fails the routes using the backend closed on the same problems).
 */
function authenticationProblems(auth: unknown, namespace: string, snapshot: Snapshot): Problem[] {
  if (!isDict(auth)) return [{ reason: 'InvalidPolicy', message: 'spec.policies.mcp.authentication must be an object' }];
  const found: string[] = [];
  const resolver = new BackendResolver(snapshot, namespace, { group: 'switchboard.dev', kind: 'ProxyBackend' });
  lowerMcpAuthentication(auth, 'spec.policies.mcp.authentication', { namespace, sources: { secrets: snapshot.secrets, configMaps: new Map(), ledger: snapshot.secretLedger }, resolver, problems: found });
  return found.map((message) => ({ reason: 'InvalidPolicy', message: `${message} (routes using this backend fail closed)` }));
}

function translate(backend: KubeObject, snapshot: Snapshot, opts: McpTranslateOptions, named: Map<string, Backend>): { ir?: McpBackendIR; problems: Problem[] } {
  const namespace = namespaceOf(backend);
  const spec = isDict(backend.spec) ? backend.spec : {};
  const mcp = isDict(spec.mcp) ? spec.mcp : undefined;
  if (!mcp) return { problems: [{ reason: 'Invalid', message: 'spec.mcp is missing' }] };
  const domain = opts.clusterDomain ?? 'cluster.local';
  const problems: Problem[] = [];
  const targets: McpTargetIR[] = [];
  listOf<Dict>(mcp.targets).forEach((selector, i) => {
    const path = `spec.mcp.targets[${i}]`;
    const name = typeof selector.name === 'string' ? selector.name : '';
    if (name === '') return problems.push({ reason: 'Invalid', message: `${path}.name is required` });
    if (isDict(selector.static)) {
      const target = staticTarget(name, selector.static, { namespace, snapshot, domain, source: `ProxyBackend/${namespace}/${backend.metadata.name}`, named }, path, problems);
      if (target) targets.push(target);
    } else if (isDict(selector.selector)) {
      const found = selectedTargets(name, selector.selector, namespace, snapshot, domain);
      if (found.length === 0) problems.push({ reason: 'BackendNotFound', message: `${path}.selector matches no Service port` });
      targets.push(...found);
    } else {
      problems.push({ reason: 'Invalid', message: `${path} needs one of static or selector` });
    }
  });
  const seen = new Set<string>();
  const unique = targets.filter((t) => {
    if (seen.has(t.name)) {
      problems.push({ reason: 'Invalid', message: `MCP target name "${t.name}" is used twice; the second is ignored` });
      return false;
    }
    seen.add(t.name);
    return true;
  });
  const policiesMcp = isDict(spec.policies) && isDict(spec.policies.mcp) ? spec.policies.mcp : {};
  if (policiesMcp.authentication !== undefined) problems.push(...authenticationProblems(policiesMcp.authentication, namespace, snapshot));
  const { authorization = [], guardrails = [] } = lowerMcpPolicy(policiesMcp, 'spec.policies.mcp', { namespace, snapshot, domain }, (p) => problems.push(p));
  if (unique.length === 0) return { problems: problems.length > 0 ? problems : [{ reason: 'BackendNotFound', message: 'spec.mcp has no usable target' }] };
  const ir: McpBackendIR = {
    key: `backend/${namespace}/${backend.metadata.name}`,
    targets: unique,
    sessionRouting: mcp.sessionRouting === 'Stateless' ? 'Stateless' : 'Stateful',
    failureMode: mcp.failureMode === 'FailOpen' ? 'FailOpen' : 'FailClosed',
    prefixMode: mcp.prefixMode === 'Always' || mcp.prefixMode === 'Never' ? mcp.prefixMode : 'Conditional',
    ...(authorization.length > 0 ? { authorization } : {}),
    ...(guardrails.length > 0 ? { guardrails } : {}),
  };
  return { ir, problems };
}

function transportOf(value: unknown): McpTransport {
  return value === 'SSE' ? 'SSE' : 'StreamableHTTP';
}

interface TargetContext {
  readonly namespace: string;
  readonly snapshot: Snapshot;
  readonly domain: string;
  /** `ProxyBackend/<ns>/<name>`, for policy sources. */
  readonly source: string;
  /** Collects the backends a served target's policies name (a tunnel's Service). */
  readonly named: Map<string, Backend>;
}

function staticTarget(name: string, t: Dict, ctx: TargetContext, path: string, problems: Problem[]): McpTargetIR | undefined {
  const { namespace, snapshot, domain } = ctx;
  if (!isPort(t.port)) {
    problems.push({ reason: 'Invalid', message: `${path}.static.port must be 1..65535` });
    return undefined;
  }
  const protocol = transportOf(t.protocol);
  const targetPath = typeof t.path === 'string' && t.path !== '' ? t.path : DEFAULT_PATH[protocol];
  let host: string;
  let endpoints: Endpoint[] = [];
  if (typeof t.host === 'string' && t.host !== '') {
    host = t.host;
  } else if (isDict(t.backendRef) && typeof t.backendRef.name === 'string') {
    const service = snapshot.services.get(`${namespace}/${t.backendRef.name}`);
    if (!service) {
      problems.push({ reason: 'BackendNotFound', message: `${path}.static.backendRef: Service ${namespace}/${t.backendRef.name} not found` });
      return undefined;
    }
    const ports = listOf<ServicePort>(isDict(service.spec) ? service.spec.ports : undefined);
    const servicePort = ports.find((p) => p.port === t.port);
    if (!servicePort) {
      problems.push({ reason: 'BackendNotFound', message: `${path}.static.backendRef: Service ${namespace}/${t.backendRef.name} has no port ${String(t.port)}` });
      return undefined;
    }
    host = `${t.backendRef.name}.${namespace}.svc.${domain}`;
    endpoints = readyEndpoints(service, servicePort, snapshot);
  } else {
    problems.push({ reason: 'Invalid', message: `${path}.static needs one of host or backendRef` });
    return undefined;
  }
  let policies: BackendPolicy | undefined;
  if (t.policies !== undefined) {
    if (!isDict(t.policies) || !(typeof t.host === 'string' && t.host !== '')) {
      problems.push({ reason: 'InvalidPolicy', message: `${path}.static.policies may only be set on a host-based target (not with backendRef); target ${name} is not served` });
      return undefined;
    }
    policies = targetPolicies(t.policies, `${path}.static.policies`, name, ctx, problems);
    if (!policies) return undefined;
  }
  return { name, host, port: t.port, path: targetPath, protocol, ...(endpoints.length > 0 ? { endpoints } : {}), ...(policies ? { policies } : {}) };
}

/** McpTarget `policies` is a BackendSimple. */
const TARGET_POLICY_MEMBERS: readonly BackendMember[] = ['tcp', 'tls', 'http', 'tunnel', 'auth'];

/**
 * A static target's inline `policies`, lowered by the policy translator's own lowering (as an AI
 * provider's inline policies are): Secrets resolved now, sources naming the target. A problem
 * leaves the target out (served without the credentials or TLS it asks for would be worse).
 */
function targetPolicies(written: Dict, path: string, name: string, ctx: TargetContext, problems: Problem[]): BackendPolicy | undefined {
  const { namespace, snapshot } = ctx;
  const found: string[] = [];
  for (const member of Object.keys(written)) {
    if (!TARGET_POLICY_MEMBERS.includes(member as BackendMember)) found.push(`${path}.${member}: not allowed on an MCP target (BackendSimple: ${TARGET_POLICY_MEMBERS.join(', ')})`);
  }
  const resolver = new BackendResolver(snapshot, namespace, { group: SWITCHBOARD_GROUP, kind: 'ProxyBackend' });
  const members = lowerBackend(written, path, {
    namespace,
    // ConfigMaps are not part of the translator's snapshot: target TLS CAs come from Secrets.
    sources: { secrets: snapshot.secrets, configMaps: new Map<string, KubeObject>(), ledger: snapshot.secretLedger },
    resolver,
    problems: found,
  }, true);
  if (found.length > 0) {
    for (const message of found) problems.push({ reason: 'InvalidPolicy', message: `${message} (target ${name} is not served)` });
    return undefined;
  }
  // A tunnel's Service joins the config's backends with this ProxyBackend (the proxy looks it up by key).
  for (const [key, backend] of resolver.backends) if (!ctx.named.has(key)) ctx.named.set(key, backend);
  const source = `${ctx.source}#${name}`;
  const sources = Object.fromEntries(Object.keys(members).map((m) => [m, [source]])) as BackendPolicy['sources'];
  return { ...(members as Partial<Record<BackendMember, unknown>>), sources } as BackendPolicy;
}

function selectedTargets(name: string, selector: Dict, namespace: string, snapshot: Snapshot, domain: string): McpTargetIR[] {
  const out: McpTargetIR[] = [];
  const namespaceSelector = isDict(selector.namespaces) ? selector.namespaces : undefined;
  for (const service of snapshot.services.values()) {
    const ns = namespaceOf(service);
    const inScope = namespaceSelector ? selectorMatches(namespaceSelector, snapshot.namespaceLabels(ns)) : ns === namespace;
    if (!inScope || !selectorMatches(isDict(selector.services) ? selector.services : undefined, stringRecord(service.metadata.labels))) continue;
    for (const port of listOf<ServicePort>(isDict(service.spec) ? service.spec.ports : undefined)) {
      if (!isPort(port.port)) continue;
      const protocol: McpTransport = typeof port.appProtocol === 'string' && /sse/i.test(port.appProtocol) ? 'SSE' : 'StreamableHTTP';
      const svc = service.metadata.name;
      const endpoints = readyEndpoints(service, port, snapshot);
      out.push({
        name: ns === namespace ? `${name}-${svc}-${port.port}` : `${name}-${ns}-${svc}-${port.port}`,
        section: name,
        host: `${svc}.${ns}.svc.${domain}`,
        port: port.port,
        path: DEFAULT_PATH[protocol],
        protocol,
        ...(endpoints.length > 0 ? { endpoints } : {}),
      });
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
