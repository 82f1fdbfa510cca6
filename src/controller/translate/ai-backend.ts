import { SWITCHBOARD_GROUP, type ServicePort } from '../../api/gateway/index.ts';
import type { Condition, KubeObject } from '../../api/gateway/object.ts';
import type { Backend, Endpoint } from '../../ir/types.ts';
import { LLM_PROVIDERS } from '../../api/v1alpha1/backend/providers.ts';
import { validateProxyObject } from '../../api/v1alpha1/validate.ts';
import { compile } from '../../cel/index.ts';
import type { AiBackendIR, AiPolicy, AiProviderIR, LLMProvider } from '../../ir/ai.ts';
import type { BackendMember, BackendPolicy } from '../../ir/policy.ts';
import { BackendResolver } from './backend.ts';
import { readyEndpoints } from './endpoints.ts';
import { lowerBackend } from './policy/members.ts';
import { isDict, isPort, listOf, type Dict } from './read.ts';
import { generationOf, namespaceOf, type Snapshot } from './snapshot.ts';
import { conditionFrom, type Problem } from './status/conditions.ts';

/**
 * ProxyBackend `spec.ai` (+ `spec.policies.ai`) → AiBackendIR. Pure: a user's mistake becomes a
 * Problem for the backend's Accepted condition. A schema error under `spec.ai` or
 * `spec.policies.ai` makes the whole backend unusable (serving half a config would send traffic
 * somewhere the user did not ask); a provider whose Service or inline policy does not resolve is
 * left out and the others are still served.
 *
 * A custom provider's `backendRef` (same-namespace Service) is reached at the Service port's
 * ready endpoints (EndpointSlices, as route backends), in turn; the Service's cluster DNS name
 * and port are written into the provider's `host`/`port` (the Host header, and where the proxy
 * connects when no endpoint is known).
 *
 * A provider's own `policies` may name backends of their own (a `tunnel`'s Service): they are
 * returned as `named`, to join the config's backends with the ProxyBackend (the proxy looks a
 * tunnel up by its key and fails closed without it).
 */
export interface AiTranslation {
  readonly ir?: AiBackendIR;
  readonly problems: readonly Problem[];
  readonly conditions: readonly Condition[];
  /** Backends the providers' policies name, by key (empty when none do). */
  readonly named: ReadonlyMap<string, Backend>;
}

export interface AiTranslateOptions {
  /** Default `cluster.local`. */
  readonly clusterDomain?: string;
}

/** The provider name of a backend with a single `provider` (no groups). */
export const SINGLE_PROVIDER_NAME = 'default';

const COMMON_MEMBERS = ['host', 'port', 'path', 'pathPrefix'] as const;

/** The ProxyBackend type translator for `ai` (registered in proxy-backend.ts). */
export function aiBackend(object: KubeObject, _spec: Dict, snapshot: Snapshot, base: { readonly key: string; readonly namespace: string; readonly name: string }): { backend?: Backend; problem?: string; conditions: readonly Condition[]; named?: ReadonlyMap<string, Backend> } {
  const { ir, problems, conditions, named } = translateAiBackend(object, snapshot);
  if (!ir) return { problem: problems.map((p) => p.message).join('; '), conditions };
  // The LLM handler reaches its providers itself; the backend has no endpoints of its own.
  const backend: Backend = { key: base.key, kind: 'ProxyBackend', namespace: base.namespace, name: base.name, endpoints: [], rewriteHost: false, ai: ir };
  return { backend, conditions, ...(named.size > 0 ? { named } : {}) };
}

export function translateAiBackend(backend: KubeObject, snapshot: Snapshot, opts: AiTranslateOptions = {}): AiTranslation {
  const named = new Map<string, Backend>();
  const { ir, problems } = translate(backend, snapshot, opts, named);
  const conditions = [conditionFrom('Accepted', problems, 'Accepted', 'AI backend accepted', generationOf(backend))];
  return ir ? { ir, problems, conditions, named } : { problems, conditions, named: new Map() };
}

function translate(backend: KubeObject, snapshot: Snapshot, opts: AiTranslateOptions, named: Map<string, Backend>): { ir?: AiBackendIR; problems: Problem[] } {
  const namespace = namespaceOf(backend);
  const spec = isDict(backend.spec) ? backend.spec : {};
  if (!isDict(spec.ai)) return { problems: [{ reason: 'Invalid', message: 'spec.ai must be an object' }] };
  const schemaProblems = validateProxyObject(backend)
    .filter((i) => i.severity === 'error' && (i.path.startsWith('spec.ai') || i.path.startsWith('spec.policies.ai')))
    .map((i): Problem => ({ reason: 'Invalid', message: `${i.path}: ${i.message}` }));
  if (schemaProblems.length > 0) return { problems: schemaProblems };

  const problems: Problem[] = [];
  const policies = isDict(spec.policies) ? spec.policies : {};
  const policy = isDict(policies.ai) ? (policies.ai as unknown as AiPolicy) : undefined;
  if (policy) checkAiPolicy(policy, 'spec.policies.ai', (message) => problems.push({ reason: 'InvalidPolicy', message }));

  const ctx: ProviderContext = { namespace, snapshot, domain: opts.clusterDomain ?? 'cluster.local', source: `ProxyBackend/${namespace}/${backend.metadata.name}`, problems };
  const written = isDict(spec.ai.provider)
    ? [{ path: 'spec.ai.provider', providers: [{ ...spec.ai.provider, name: SINGLE_PROVIDER_NAME }] }]
    : listOf<Dict>(spec.ai.groups).map((g, i) => ({ path: `spec.ai.groups[${i}].providers`, providers: listOf<Dict>(g.providers) }));
  const groups = written
    .map(({ path, providers }) => ({
      providers: providers.flatMap((p, j) => {
        const provider = providerIR(p, isDict(spec.ai) && isDict(spec.ai.provider) ? path : `${path}[${j}]`, ctx, named);
        return provider ? [provider] : [];
      }),
    }))
    .filter((g) => g.providers.length > 0);
  if (groups.length === 0) return { problems: problems.length > 0 ? problems : [{ reason: 'Invalid', message: 'spec.ai has no usable provider' }] };
  return { ir: { key: `backend/${namespace}/${backend.metadata.name}`, groups, ...(policy ? { policy } : {}) }, problems };
}

export interface ProviderContext {
  readonly namespace: string;
  readonly snapshot: Snapshot;
  readonly domain: string;
  readonly source: string;
  readonly problems: Problem[];
}

/** `named` collects the backends the provider's policies name, once the provider is served. */
function providerIR(written: Dict, path: string, ctx: ProviderContext, named: Map<string, Backend>): AiProviderIR | undefined {
  const name = typeof written.name === 'string' ? written.name : SINGLE_PROVIDER_NAME;
  const token = LLM_PROVIDERS.find((t) => isDict(written[t]));
  if (!token) return undefined;
  const provider: Record<string, unknown> = { [token]: written[token] };
  for (const member of COMMON_MEMBERS) if (written[member] !== undefined) provider[member] = written[member];
  const endpoints = token === 'custom' ? resolveCustomTarget(provider, `${path}.custom.backendRef`, ctx) : [];
  if (endpoints === undefined) return undefined;

  let policies: BackendPolicy | undefined;
  if (isDict(written.policies)) {
    const found: string[] = [];
    const resolver = new BackendResolver(ctx.snapshot, ctx.namespace, { group: SWITCHBOARD_GROUP, kind: 'ProxyBackend' });
    const lowerCtx = {
      namespace: ctx.namespace,
      // ConfigMaps are not part of the translator's snapshot: provider TLS CAs come from Secrets.
      sources: { secrets: ctx.snapshot.secrets, configMaps: new Map<string, KubeObject>(), ledger: ctx.snapshot.secretLedger },
      resolver,
      problems: found,
    };
    const members = lowerBackend(written.policies, `${path}.policies`, lowerCtx, true);
    if (isDict(members.ai)) checkAiPolicy(members.ai, `${path}.policies.ai`, (message) => found.push(message));
    if (found.length > 0) {
      for (const message of found) ctx.problems.push({ reason: 'InvalidPolicy', message: `${message} (provider ${name} is not served)` });
      return undefined;
    }
    for (const [key, backend] of resolver.backends) if (!named.has(key)) named.set(key, backend);
    const source = `${ctx.source}#${name}`;
    const sources = Object.fromEntries(Object.keys(members).map((m) => [m, [source]])) as BackendPolicy['sources'];
    policies = { ...(members as Partial<Record<BackendMember, unknown>>), sources } as BackendPolicy;
  }
  return { name, provider: provider as unknown as LLMProvider, ...(endpoints.length > 0 ? { endpoints } : {}), ...(policies ? { policies } : {}) };
}

/**
 * Sets host/port of a custom provider from its same-namespace Service (its cluster DNS name) and
 * returns the Service port's ready endpoints, which the proxy connects to in turn; undefined
 * (with a problem) when the reference does not resolve.
 */
export function resolveCustomTarget(provider: Record<string, unknown>, path: string, ctx: ProviderContext): Endpoint[] | undefined {
  const custom = provider.custom as Dict;
  const ref = isDict(custom.backendRef) ? custom.backendRef : undefined;
  if (!ref) return [];
  const kind = typeof ref.kind === 'string' ? ref.kind : 'Service';
  const group = typeof ref.group === 'string' ? ref.group : '';
  if (group !== '' || kind !== 'Service') {
    ctx.problems.push({ reason: 'InvalidKind', message: `${path}: ${group ? `${group}/` : ''}${kind} is not supported; only a same-namespace Service is` });
    return undefined;
  }
  const id = `${ctx.namespace}/${String(ref.name)}`;
  const service = ctx.snapshot.services.get(id);
  if (!service) {
    ctx.problems.push({ reason: 'BackendNotFound', message: `${path}: Service ${id} not found` });
    return undefined;
  }
  const ports = listOf<ServicePort>(isDict(service.spec) ? service.spec.ports : undefined);
  const servicePort = ports.find((p) => p.port === ref.port);
  if (!isPort(ref.port) || !servicePort) {
    ctx.problems.push({ reason: 'BackendNotFound', message: `${path}: Service ${id} has no port ${String(ref.port)}` });
    return undefined;
  }
  provider.host = `${String(ref.name)}.${ctx.namespace}.svc.${ctx.domain}`;
  provider.port = ref.port;
  return readyEndpoints(service, servicePort, ctx.snapshot);
}

/** Compiles the AI policy's CEL so a bad expression is reported here, not per request. */
export function checkAiPolicy(policy: AiPolicy, path: string, report: (message: string) => void): void {
  for (const list of ['transformations', 'finalTransformations'] as const) {
    (policy[list] ?? []).forEach((t, i) => {
      const compiled = compile(t.expression);
      if (!compiled.ok) report(`${path}.${list}[${i}].expression: ${compiled.error.message}`);
    });
  }
}
