import type { KubeObject } from '../../../api/gateway/object.ts';
import { validateProxyObject } from '../../../api/v1alpha1/validate.ts';
import type { BackendMember, FrontendMember, PolicySource, TrafficMember } from '../../../ir/policy.ts';
import type { BackendResolver } from '../backend.ts';
import { isDict, listOf } from '../read.ts';
import { generationOf, namespaceOf, type Snapshot } from '../snapshot.ts';
import type { SelectableConfig } from './client-auth.ts';
import { lowerBackend, lowerFrontend, lowerMcpAuthentication, lowerTraffic, type Members } from './members.ts';
import type { ConfigSources } from './secrets.ts';

export const PROXY_POLICY = { group: 'switchboard.dev', kind: 'ProxyPolicy' } as const;

/** One entry of targetRefs or targetSelectors as written. */
export interface TargetSpec {
  readonly group: string;
  readonly kind: string;
  readonly name?: string;
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly sectionName?: string;
  readonly port?: number;
}

/** A ProxyPolicy read, validated and lowered once; attachment and merging use it everywhere it applies. */
export interface PolicyModel {
  readonly object: KubeObject;
  readonly namespace: string;
  readonly source: PolicySource;
  /** Position in age order (oldest first, then namespace/name): the tie-break at one level. */
  readonly order: number;
  readonly generation: number | undefined;
  readonly override: boolean;
  readonly phase: 'PreRouting' | 'PostRouting';
  readonly targets: readonly TargetSpec[];
  readonly frontend?: Members<FrontendMember>;
  readonly traffic?: Members<TrafficMember>;
  readonly backend?: Members<BackendMember>;
  /** Why the policy is not accepted (schema errors, bad CEL, missing Secrets); its places fail closed. */
  readonly problems: readonly string[];
}

export type Section = 'frontend' | 'traffic' | 'backend';

/** The sections the policy's spec sets (also for an invalid policy, so its places can fail closed). */
export function sectionsOf(policy: PolicyModel): Section[] {
  const spec = isDict(policy.object.spec) ? policy.object.spec : {};
  return (['frontend', 'traffic', 'backend'] as const).filter((s) => isDict(spec[s]));
}

export interface PolicyInputs {
  readonly snapshot: Snapshot;
  readonly sources: ConfigSources;
  readonly selectable: SelectableConfig;
}

/**
 * Schema and rule problems depend on the object alone: kept per object, so a policy that did not
 * change is not validated again on every translation of a changing object set (issue 15).
 */
const schemaChecked = new WeakMap<KubeObject, readonly string[]>();

function schemaProblemsOf(object: KubeObject): readonly string[] {
  let problems = schemaChecked.get(object);
  if (problems === undefined) {
    problems = validateProxyObject(object)
      .filter((issue) => issue.severity === 'error')
      .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
    schemaChecked.set(object, problems);
  }
  return problems;
}

/** Reads one ProxyPolicy; never throws. `resolver` collects the backends its endpoints name. */
export function readPolicy(object: KubeObject, order: number, inputs: PolicyInputs, resolver: BackendResolver): PolicyModel {
  const namespace = namespaceOf(object);
  const source = `ProxyPolicy/${namespace}/${object.metadata.name}`;
  const spec = isDict(object.spec) ? object.spec : {};
  const traffic = isDict(spec.traffic) ? spec.traffic : undefined;
  const base = {
    object, namespace, source, order,
    generation: generationOf(object),
    override: isDict(spec.strategy) && spec.strategy.inheritance === 'Override',
    phase: traffic?.phase === 'PreRouting' ? 'PreRouting' as const : 'PostRouting' as const,
    targets: [...targetSpecs(spec.targetRefs), ...targetSpecs(spec.targetSelectors)],
  };
  const schemaProblems = schemaProblemsOf(object);
  if (schemaProblems.length > 0) return { ...base, problems: [...schemaProblems] };

  const problems: string[] = [];
  const ctx = { namespace, sources: inputs.sources, resolver, problems, snapshot: inputs.snapshot };
  return {
    ...base,
    ...(isDict(spec.frontend) ? { frontend: lowerFrontend(spec.frontend, source, ctx) } : {}),
    ...(traffic ? { traffic: lowerTraffic(traffic, source, ctx, inputs.selectable) } : {}),
    ...(isDict(spec.backend) ? { backend: lowerBackend(spec.backend, 'spec.backend', ctx, false) } : {}),
    problems,
  };
}

function targetSpecs(value: unknown): TargetSpec[] {
  return listOf<Record<string, unknown>>(value).flatMap((t) => {
    if (typeof t.kind !== 'string') return [];
    const matchLabels = isDict(t.matchLabels) ? Object.fromEntries(Object.entries(t.matchLabels).filter((e): e is [string, string] => typeof e[1] === 'string')) : undefined;
    if (typeof t.name !== 'string' && matchLabels === undefined) return [];
    return [{
      group: typeof t.group === 'string' ? t.group : '',
      kind: t.kind,
      ...(typeof t.name === 'string' ? { name: t.name } : { matchLabels }),
      ...(typeof t.sectionName === 'string' ? { sectionName: t.sectionName } : {}),
      ...(Number.isInteger(t.port) ? { port: t.port as number } : {}),
    }];
  });
}

/** A ProxyBackend's inline `spec.policies`, lowered in the backend's namespace. */
export function readInlineBackendPolicies(object: KubeObject, inputs: PolicyInputs, resolver: BackendResolver): InlineBackendRead | undefined {
  const spec = isDict(object.spec) ? object.spec : {};
  if (!isDict(spec.policies)) return undefined;
  const problems: string[] = [];
  const namespace = namespaceOf(object);
  const members = lowerBackend(spec.policies, 'spec.policies', { namespace, sources: inputs.sources, resolver, problems, snapshot: inputs.snapshot }, true);
  const auth = isDict(spec.policies.mcp) && isDict(spec.mcp) ? spec.policies.mcp.authentication : undefined;
  if (!isDict(auth)) return { members, problems };
  const authProblems: string[] = [];
  const jwtAuthentication = lowerMcpAuthentication(auth, 'spec.policies.mcp.authentication', { namespace, sources: inputs.sources, resolver, problems: authProblems });
  return { members, problems, mcpAuthentication: { jwtAuthentication, problems: authProblems } };
}

export interface InlineBackendRead {
  readonly members: Members<BackendMember>;
  readonly problems: string[];
  /**
   * The deprecated `spec.policies.mcp.authentication` of an MCP backend, as the traffic
   * jwtAuthentication the routes using the backend get (an explicit one on the route wins).
   */
  readonly mcpAuthentication?: { readonly jwtAuthentication: unknown; readonly problems: readonly string[] };
}
