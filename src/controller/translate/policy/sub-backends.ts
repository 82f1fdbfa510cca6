/**
 * The sub-backends of a ProxyBackend whose effective backend policy the translator computes one
 * by one (docs/policies.md): AI providers and MCP targets. Each is named as the proxy looks it up
 * (`subBackends[<name>]`), says which `targetRefs[].sectionName` reaches it (a selector MCP target
 * is reached through its `targets[]` entry's name) and carries its own inline `policies`, the most
 * specific level of its merge.
 */
import type { BackendMember, BackendPolicy } from '../../../ir/policy.ts';
import type { Backend } from '../../../ir/types.ts';
import type { Members } from './members.ts';

export interface SubBackend {
  /** The key of `BackendPolicy.subBackends`: the provider's or target's IR name. */
  readonly name: string;
  /** The sectionName that attaches policies to it; undefined when none can (a single `provider`). */
  readonly section: string | undefined;
  /**
   * Its own inline `policies` as a contribution, when it has any. `aiByField`: a ProxyModel's
   * policies, whose `transformations`, `finalTransformations` and `promptGuard` are top-level
   * fields of their own (SPEC.md ModelPolicies): each replaces only that field of the `ai` member
   * the levels below give, not the whole member (policy/apply.ts).
   */
  readonly own?: { readonly source: string; readonly members: Members<BackendMember>; readonly aiByField?: true };
}

/** Sub-backends of `backend`; `sectionNames` are the names policies may target (targets.ts subBackendNames). */
export function subBackendsOf(backend: Backend, sectionNames: readonly string[]): SubBackend[] {
  const sections = new Set(sectionNames);
  const sectionOf = (name: string): string | undefined => (sections.has(name) ? name : undefined);
  if (backend.mcp) {
    return backend.mcp.targets.map((t) => ({ name: t.name, section: sectionOf(t.section ?? t.name), ...ownOf(t.policies, `${backend.key}#${t.name}`) }));
  }
  if (backend.ai) {
    // ProxyModels' providers too (docs/models.md): a model's own `policies` are its providers' inline ones. A provider a
    // virtual model's groups repeat is the same provider (same name, same policies): listed once.
    const modelProviders = new Set((backend.ai.models ?? []).flatMap((m) => m.groups).flatMap((g) => g.providers));
    const providers = [...backend.ai.groups.flatMap((g) => g.providers), ...modelProviders];
    const unique = [...new Map(providers.map((p) => [p.name, p])).values()];
    return unique.map((p) => ({ name: p.name, section: sectionOf(p.name), ...ownOf(p.policies, `${backend.key}#${p.name}`, modelProviders.has(p)) }));
  }
  return sectionNames.map((name) => ({ name, section: name }));
}

/** Whether some sub-backend of `backend` has inline policies of its own (then its effective policy must be written even when no policy object applies). */
export function hasOwnSubBackendPolicies(backend: Backend): boolean {
  return subBackendsOf(backend, []).some((s) => s.own !== undefined);
}

function ownOf(policies: BackendPolicy | undefined, fallbackSource: string, ofModel = false): { own?: SubBackend['own'] } {
  if (!policies) return {};
  const { sources, invalid: _invalid, subBackends: _sub, ...members } = policies;
  // The translator wrote one source for every member of a provider's or target's policies.
  const source = Object.values(sources).find((s) => s !== undefined && s.length > 0)?.[0] ?? fallbackSource;
  return { own: { source, members: members as Members<BackendMember>, ...(ofModel && members.ai !== undefined ? { aiByField: true as const } : {}) } };
}
