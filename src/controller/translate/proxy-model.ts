/**
 * ProxyModel (experimental, docs/models.md) → the `ai` backend the LLM handler already serves.
 *
 * Attachment served today: an HTTPRoute rule whose single backendRef is
 * `{group: switchboard.dev, kind: ProxyModel, name: "*"}` and whose path matches are PathPrefix.
 * That backendRef resolves to one AiBackendIR with `models`: every ProxyModel with a parentRef to
 * this route (and this rule: `sectionName` is the rule's name, or the route has exactly one rule),
 * ordered most specific first (src/common/model-match.ts). Each model is a priority group of one
 * provider named after the object (`<namespace>/<name>`), so provider health, failover and
 * credentials are the `ai` backend's own.
 *
 * Virtual models (failover, weighted, conditional) are lowered in proxy-model-virtual.ts, a
 * model's own `policies` in proxy-model-policies.ts. A model attached to a Gateway or ListenerSet
 * joins the models rules of the routes attached to it (proxy-model-attach.ts). The API is off
 * unless the translator is told `proxyModels: true`
 * (`switchboard run --enable-proxy-models`); off, a `*` backendRef is refused and every model's
 * status says the API is disabled.
 */
import { GATEWAY_GROUP, SWITCHBOARD_GROUP } from '../../api/gateway/index.ts';
import type { KubeObject } from '../../api/gateway/object.ts';
import { orderBySpecificity, parseModelPattern, type Visibility } from '../../common/model-match.ts';
import type { AiBackendIR, AiPolicy, AiProviderIR, LLMProvider, ModelChoiceIR, ModelRouteIR } from '../../ir/ai.ts';
import type { BackendPolicy } from '../../ir/policy.ts';
import type { Backend } from '../../ir/types.ts';
import { resolveCustomTarget } from './ai-backend.ts';
import { lowerModelPolicies, overlayPolicies } from './proxy-model-policies.ts';
import { parentTier, routeParents, TIER_RULE } from './proxy-model-attach.ts';
import { routeCatalog } from './proxy-model-catalog.ts';
import { lowerModelProvider } from './proxy-model-provider.ts';
import { lowerVirtual } from './proxy-model-virtual.ts';
import { isDict, listOf, type Dict } from './read.ts';
import { creationOf, namespaceOf, type Snapshot } from './snapshot.ts';
import type { Problem } from './status/conditions.ts';

export const PROXY_MODEL_KIND = 'ProxyModel';
/** The only backendRef name a rule may use for ProxyModels. */
export const ALL_MODELS = '*';

/**
 * The route types of a models backend, by the SDKs' path suffixes (a ProxyBackend writes its own
 * `policies.ai.routes`; a rule of models has nowhere to write them): OpenAI's and Anthropic's.
 */
export const MODEL_ROUTES: NonNullable<AiPolicy['routes']> = {
  '/chat/completions': 'Completions', '/messages': 'Messages', '/messages/count_tokens': 'TokenCount', '/responses': 'Responses', '/embeddings': 'Embeddings', '/models': 'Models',
};

/** What the rule holding the `*` backendRef looks like (route/rule.ts passes it). */
export interface ModelRuleContext {
  readonly routeName: string;
  readonly ruleIndex: number;
  readonly ruleName?: string;
  readonly ruleCount: number;
  readonly backendRefCount: number;
  readonly pathTypes: readonly string[];
}

/** One ProxyModel lowered, or why it is not served. Shared by the backend and the status. */
export type LoweredModel = { readonly route: ModelRouteIR; readonly problems: readonly [] } | { readonly route?: undefined; readonly problems: readonly Problem[] };

export function isProxyModelRef(ref: { readonly group?: string; readonly kind?: string }): boolean {
  return ref.group === SWITCHBOARD_GROUP && ref.kind === PROXY_MODEL_KIND;
}

/** Whether `parentRef` (written on a model in `modelNamespace`) names rule `ctx` of route `routeNamespace/ctx.routeName`. */
export function namesRule(parentRef: Dict, modelNamespace: string, routeNamespace: string, ctx: Pick<ModelRuleContext, 'routeName' | 'ruleIndex' | 'ruleName' | 'ruleCount'>): boolean {
  if ((parentRef.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || parentRef.kind !== 'HTTPRoute') return false;
  if (parentRef.name !== ctx.routeName || (typeof parentRef.namespace === 'string' ? parentRef.namespace : modelNamespace) !== routeNamespace) return false;
  if (typeof parentRef.sectionName === 'string') return parentRef.sectionName === ctx.ruleName;
  return ctx.ruleCount === 1;
}

/** What lowering needs beyond the object: the Services (Custom models), every ProxyModel (virtual models' targets). */
export interface LowerOptions {
  readonly clusterDomain?: string;
  /** Resolve a Custom model's backendRef to its Service's ready endpoints; without it (the status) the Service is not looked up. */
  readonly snapshot?: Snapshot;
  /** Every ProxyModel, for a virtual model's `modelRef`s (same namespace). */
  readonly models?: readonly KubeObject[];
  /** The translation's backends: those a model's policies name (a tunnel's Service) are added (the status passes none). */
  readonly backends?: Map<string, Backend>;
}

export function lowerModel(object: KubeObject, opts: LowerOptions = {}): LoweredModel {
  const spec = isDict(object.spec) ? object.spec : {};
  const namespace = namespaceOf(object);
  const id = `${namespace}/${object.metadata.name}`;
  const problems: Problem[] = [];
  const match = isDict(spec.match) && typeof spec.match.model === 'string' ? spec.match.model : undefined;
  const pattern = parseModelPattern(match, object.metadata.name);
  if ('error' in pattern) problems.push({ reason: 'Invalid', message: `spec.${pattern.error}` });
  const own = lowerModelPolicies(spec.policies, 'spec.policies', `ProxyModel/${id}`, namespace, opts.snapshot, problems, opts.backends);
  let lowered: { groups: ModelRouteIR['groups']; choice?: ModelChoiceIR } | undefined;
  if (isDict(spec.virtualModel)) {
    // A target carries its own model's policies (vendor credentials, TLS …) under the virtual model's, which win.
    const lowerTarget = (target: KubeObject, name: string, pin: string, path: string) => {
      const targetPolicies = lowerModelPolicies(isDict(target.spec) ? target.spec.policies : undefined, `${path}.policies`, `ProxyModel/${namespaceOf(target)}/${target.metadata.name}`, namespace, opts.snapshot, problems, opts.backends);
      return lowerConcrete(target, name, pin, opts, problems, path, overlayPolicies(targetPolicies.provider, own.provider))?.[0].providers[0];
    };
    lowered = lowerVirtual(spec.virtualModel, id, namespace, opts.models ?? [], problems, lowerTarget);
  } else {
    const groups = lowerConcrete(object, id, undefined, opts, problems, 'spec', own.provider);
    lowered = groups ? { groups } : undefined;
  }
  if (problems.length > 0 || !lowered || 'error' in pattern) return { problems };
  const visibility: Visibility = spec.visibility === 'Internal' ? 'Internal' : 'Public';
  const created = creationOf(object);
  return {
    route: { id, pattern, visibility, ...(created ? { created } : {}), groups: lowered.groups, ...(lowered.choice ? { choice: lowered.choice } : {}), ...(own.authorization ? { authorization: own.authorization } : {}) },
    problems: [],
  };
}

/** A model with a `provider`: one group of one provider named `name` (default the model's id), the upstream model pinned when `pin` is set. */
function lowerConcrete(object: KubeObject, name: string, pin: string | undefined, opts: LowerOptions, problems: Problem[], path: string, policies: BackendPolicy | undefined): ModelRouteIR['groups'] | undefined {
  const spec = isDict(object.spec) ? object.spec : {};
  const namespace = namespaceOf(object);
  const lowered = lowerModelProvider(spec, path);
  problems.push(...lowered.problems);
  if (!lowered.provider) return undefined;
  const provider = pin === undefined ? lowered.provider : pinModel(lowered.provider, pin);
  // SSRF guard at connect time too (the baseURL check sees only the written name): every vendor
  // address is checked when the proxy connects, except a Custom model's own Service (SPEC.md).
  const onBackendRef = 'custom' in provider && provider.custom.backendRef !== undefined;
  let served: AiProviderIR = { name, provider, ...(policies ? { policies } : {}), ...(onBackendRef ? {} : { guardAddresses: true as const }) };
  if ('custom' in provider && provider.custom.backendRef && opts.snapshot) {
    // resolveCustomTarget writes the Service's DNS name and port into the provider it is given.
    const written = { ...provider } as Record<string, unknown>;
    const ctx = { namespace, snapshot: opts.snapshot, domain: opts.clusterDomain ?? 'cluster.local', source: `ProxyModel/${namespace}/${object.metadata.name}`, problems };
    const endpoints = resolveCustomTarget(written, `${path}.custom.backendRef`, ctx);
    if (!endpoints) return undefined;
    served = { name, provider: written as unknown as LLMProvider, ...(endpoints.length > 0 ? { endpoints } : {}), ...(policies ? { policies } : {}) };
  }
  return [{ providers: [served] }];
}

/** The provider config's `model` (every provider module's "model to use instead of the request's"). */
function pinModel(provider: LLMProvider, model: string): LLMProvider {
  const token = Object.keys(provider).find((k) => k.startsWith('provider') || k === 'custom');
  if (!token) return provider;
  const config = (provider as unknown as Record<string, Dict>)[token];
  return { ...provider, [token]: { ...config, model } } as LLMProvider;
}

/** Why a rule may not carry the `*` backendRef (SPEC.md), or undefined. */
export function ruleProblem(ctx: ModelRuleContext, ref: { readonly name: string }, path: string): Problem | undefined {
  if (ref.name !== ALL_MODELS) return { reason: 'InvalidKind', message: `${path}: a ProxyModel backendRef must be named "${ALL_MODELS}" (the models attached to this rule)` };
  if (ctx.backendRefCount !== 1) return { reason: 'InvalidKind', message: `${path}: a rule with the ProxyModel backend "*" must have no other backendRef` };
  const notPrefix = ctx.pathTypes.find((t) => t !== 'PathPrefix');
  if (notPrefix) return { reason: 'InvalidKind', message: `${path}: a rule with the ProxyModel backend "*" may match paths by PathPrefix only, not ${notPrefix}` };
  return undefined;
}

/**
 * The backend a rule's `*` backendRef stands for: every served model attached to the rule. A
 * rule with no served model still gets a backend (a 404 per request, model_not_found), so adding
 * the first model is a backend change, not a route change.
 */
export function modelsBackend(models: readonly KubeObject[], routeNamespace: string, ctx: ModelRuleContext, opts: { readonly clusterDomain?: string; readonly snapshot?: Snapshot; readonly backends?: Map<string, Backend> } = {}): Backend {
  // Gateway and ListenerSet parents reach this rule through the parents of its route (proxy-model-attach.ts).
  const route = opts.snapshot?.httpRoutes.find((r) => r.metadata.name === ctx.routeName && namespaceOf(r) === routeNamespace);
  const parents = routeParents(route);
  const tiers = new Map<string, number>();
  for (const m of models) {
    const onRule = listOf<Dict>(isDict(m.spec) ? m.spec.parentRefs : undefined).some((p) => namesRule(p, namespaceOf(m), routeNamespace, ctx));
    const tier = onRule ? TIER_RULE : parentTier(m, parents);
    if (tier !== undefined) tiers.set(`${namespaceOf(m)}/${m.metadata.name}`, tier);
  }
  const routes = models.flatMap((m) => {
    if (!tiers.has(`${namespaceOf(m)}/${m.metadata.name}`)) return [];
    const lowered = lowerModel(m, { ...opts, models });
    return lowered.route ? [lowered.route] : [];
  });
  const key = `models/${routeNamespace}/${ctx.routeName}/rule/${ctx.ruleIndex}`;
  const catalog = opts.snapshot ? routeCatalog(opts.snapshot, route) : [];
  const ai: AiBackendIR = { key, groups: [], policy: { routes: MODEL_ROUTES }, models: orderBySpecificity(routes, (r) => tiers.get(r.id) ?? TIER_RULE), ...(catalog.length > 0 ? { catalog } : {}) };
  return { key, kind: 'ProxyBackend', namespace: routeNamespace, name: ctx.routeName, endpoints: [], rewriteHost: false, ai };
}
