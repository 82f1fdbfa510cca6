/**
 * A ProxyModel's own `policies` (SPEC.md ModelPolicies, docs/models.md) lowered onto what `ai`
 * providers already have, so the proxy applies them through the same backend-policy layer:
 *
 * - `auth`, `health`, `tls`, `tunnel` → the provider's inline backend policy members of the same
 *   name (the most specific level of its merge: they beat ProxyPolicies on the route).
 * - `transformations`, `finalTransformations`, `promptGuard` → the provider's `ai` member, merged
 *   field by field over the `ai` a route or Gateway policy gives (they are top-level fields of
 *   ModelPolicies, SPEC.md: a model that sets only transformations keeps the route's prompt guard;
 *   policy/sub-backends.ts marks them, policy/apply.ts merges).
 * - `headers` (Gateway API header filters: literal values) → the provider's backend
 *   `transformation`, each value a CEL string literal, request and response side.
 * - `authorization` → the model route's own rule, checked when a request names the model (the
 *   proxy's model router, before any provider is tried).
 *
 * A member that does not lower (a missing Secret, bad CEL) makes the model not served, with the
 * field named, rather than served without it.
 */
import { SWITCHBOARD_GROUP } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import type { AiPolicy } from '../../ir/ai.ts';
import type { AuthorizationAction, AuthorizationPolicy, BackendMember, BackendPolicy } from '../../ir/policy.ts';
import type { Backend } from '../../ir/types.ts';
import { compile } from '../../cel/index.ts';
import { checkAiPolicy } from './ai-backend.ts';
import { BackendResolver } from './backend.ts';
import { lowerBackend } from './policy/members.ts';
import { isDict, listOf, type Dict } from './read.ts';
import { indexObjects, type Snapshot } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

export interface LoweredModelPolicies {
  /** What each provider the model stands for carries as its inline `policies`. */
  readonly provider?: BackendPolicy;
  readonly authorization?: AuthorizationPolicy;
}

const CONNECTION_MEMBERS = ['auth', 'health', 'tls', 'tunnel'] as const;
const AI_MEMBERS = ['transformations', 'finalTransformations', 'promptGuard'] as const;

/**
 * `written` is `spec.policies` of the model `source` (`ProxyModel/<ns>/<name>`); problems are
 * pushed with the field under `path`. Without a snapshot (no Secrets to read) a member that
 * needs one reports it missing, as any policy would. Backends the policies name (a tunnel's
 * Service) are added to `backends`, the translation's, when given.
 */
export function lowerModelPolicies(written: unknown, path: string, source: string, namespace: string, snapshot: Snapshot | undefined, problems: Problem[], backends?: Map<string, Backend>): LoweredModelPolicies {
  if (!isDict(written)) return {};
  const found: string[] = [];
  const backend: Dict = {};
  for (const member of CONNECTION_MEMBERS) if (written[member] !== undefined) backend[member] = written[member];
  const ai: Dict = {};
  for (const member of AI_MEMBERS) if (written[member] !== undefined) ai[member] = written[member];
  if (Object.keys(ai).length > 0) backend.ai = ai;
  if (isDict(written.headers)) {
    const transformation = headersAsTransformation(written.headers);
    if (transformation) backend.transformation = transformation;
  }
  let provider: BackendPolicy | undefined;
  let resolver: BackendResolver | undefined;
  if (Object.keys(backend).length > 0) {
    // Without the translation's snapshot nothing resolves: Secrets and tunnel targets are reported missing.
    const world = snapshot ?? indexObjects([]);
    const ctx = {
      namespace,
      // ConfigMaps are not part of the translator's snapshot: model TLS CAs come from Secrets (as provider policies').
      sources: { secrets: world.secrets, configMaps: new Map<string, KubeObject>(), ledger: world.secretLedger },
      resolver: (resolver = new BackendResolver(world, namespace, { group: SWITCHBOARD_GROUP, kind: 'ProxyModel' })),
      problems: found,
      snapshot: world,
    };
    const members = lowerBackend(backend, path, ctx, true);
    // The ai member is carried as written: its transformations' CEL is checked here, as a ProxyBackend's is.
    if (isDict(members.ai)) checkAiPolicy(members.ai as AiPolicy, path, (message) => found.push(message));
    const sources = Object.fromEntries(Object.keys(members).map((m) => [m, [source]])) as BackendPolicy['sources'];
    provider = { ...(members as Partial<Record<BackendMember, unknown>>), sources } as BackendPolicy;
  }
  const authorization = isDict(written.authorization) ? authorizationOf(written.authorization, `${path}.authorization`, source, found) : undefined;
  for (const message of found) problems.push({ reason: 'Invalid', message });
  if (found.length > 0) return {};
  // A tunnel's Service becomes a backend of the config, as one a ProxyPolicy names does (the proxy looks it up by key).
  if (resolver && backends) for (const [key, named] of resolver.backends) if (!backends.has(key)) backends.set(key, named);
  return { ...(provider ? { provider } : {}), ...(authorization ? { authorization } : {}) };
}

/** The virtual model's members win over the target's (they are the operator's word for this name); `ai` is merged field by field. */
export function overlayPolicies(target: BackendPolicy | undefined, virtual: BackendPolicy | undefined): BackendPolicy | undefined {
  if (!target || !virtual) return virtual ?? target;
  const ai = target.ai && virtual.ai ? ({ ...target.ai, ...virtual.ai } as AiPolicy) : undefined;
  return { ...target, ...virtual, ...(ai ? { ai } : {}), sources: { ...target.sources, ...virtual.sources } };
}

/** Gateway API header filter (literal values) → a backend transformation side (CEL values): a JSON string is a CEL string literal. */
function headersAsTransformation(headers: Dict): Dict | undefined {
  const side = (filter: unknown): Dict | undefined => {
    if (!isDict(filter)) return undefined;
    const literal = (entries: unknown) => listOf<Dict>(entries).map((h) => ({ name: h.name, value: JSON.stringify(String(h.value)) }));
    const out: Dict = {};
    if (filter.set !== undefined) out.set = literal(filter.set);
    if (filter.add !== undefined) out.add = literal(filter.add);
    if (Array.isArray(filter.remove)) out.remove = filter.remove.filter((n): n is string => typeof n === 'string');
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const request = side(headers.request);
  const response = side(headers.response);
  if (!request && !response) return undefined;
  return { ...(request ? { request } : {}), ...(response ? { response } : {}) };
}

function authorizationOf(rule: Dict, path: string, source: string, found: string[]): AuthorizationPolicy | undefined {
  const written = isDict(rule.policy) ? rule.policy.matchExpressions : undefined;
  const expressions = Array.isArray(written) ? written.filter((e): e is string => typeof e === 'string') : [];
  if (expressions.length === 0) {
    found.push(`${path}.policy.matchExpressions: at least one expression is required`);
    return undefined;
  }
  let ok = true;
  expressions.forEach((expression, i) => {
    const compiled = compile(expression, { expect: ['bool'] });
    if (!compiled.ok) {
      found.push(`${path}.policy.matchExpressions[${i}]: invalid CEL expression: ${compiled.error.message}`);
      ok = false;
    }
  });
  if (!ok) return undefined;
  const action = (typeof rule.action === 'string' ? rule.action : 'Allow') as AuthorizationAction;
  return { rules: [{ matchExpressions: expressions, action, source }] };
}
