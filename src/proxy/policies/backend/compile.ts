import type { Dispatcher } from 'undici';
import { compile, type Program } from '../../../cel/index.ts';
import type { BackendMember, BackendPolicy, CredentialLocation, InvalidPolicy } from '../../../ir/policy.ts';
import { RoundRobin } from '../../routing/picker.ts';
import type { UpstreamEndpoints, UpstreamPools, UpstreamTarget } from './pools.ts';
import type { PolicyContext, RequestIdentity } from '../context.ts';
import { applyBackendCredentials, writeCredential } from './auth.ts';
import { compileCloudCredentials, type UpstreamCall } from './cloud-auth.ts';
import { usesCloudCredentials } from '../credentials/backend-credentials.ts';
import { connectionSettings, type ConnectionSettings } from './connection.ts';
import { HealthStates, PassiveHealth, healthOutcome } from './health.ts';
import { unsupportedOn, type UpstreamKind } from './support.ts';
import { compileBackendExtAuth, type BackendStepDeps } from './ext-auth.ts';
import type { CompiledTrafficPolicy } from '../chain.ts';
import { silentLogger } from '../../../common/logger.ts';
import { compileTokenMechanism, type TokenMechanism } from './token-auth.ts';
import { compileTransformationPolicy } from '../traffic/transformation/transformation.ts';
import type { RunPolicy } from '../conditional/conditional.ts';
import { ownMembers } from './sub-backend.ts';

type Headers = Record<string, string | string[]>;
export interface PreparedRequest {
  readonly headers: Headers;
  readonly path: string;
}

/**
 * An effective BackendPolicy compiled once per config for one rule × backend (× listener): the
 * endpoints under its connection settings, credentials to write, passive health, and the
 * response deadline. The Exchange and the resolver consult it; it never reads config per request.
 */
export interface CompiledBackendPolicy {
  /** Non-empty: requests through this policy are answered 500 and never forwarded. */
  readonly invalid: readonly InvalidPolicy[];
  /** `http.requestTimeout`: deadline for the upstream response. */
  readonly requestTimeoutMs: number | undefined;
  /** Pools this policy dispatches to (kept across the swap). */
  readonly dispatchers: readonly Dispatcher[];
  /** The tcp/tls/http/tunnel settings, for connections made outside the pools (Upgrade relays); undefined: plain TCP. */
  readonly connection: ConnectionSettings | undefined;
  /** The endpoint for the next request; undefined means the backend's own round robin applies. */
  pickTarget(): UpstreamTarget | undefined;
  /**
   * Credentials written into the upstream request; a promise only for signed/exchanged tokens.
   * `call` (method, Host, body) is needed when `needsCall` says so (cloud credentials), else ignored.
   */
  prepare(headers: Headers, path: string, ctx: PolicyContext | undefined, call?: UpstreamCall): PreparedRequest | Promise<PreparedRequest>;
  /** `prepare` signs or audiences the request (auth.cloudA/B/C): the caller passes the UpstreamCall. */
  readonly needsCall: boolean;
  /** The request's policy context is needed even when no traffic policy ran (transformation, token exchange). */
  readonly needsContext: boolean;
  /** extAuth's response headers or a transformation's response side, here or on a sub-backend: the handler's response needs the effects wrapper. */
  readonly addsResponseEffects: boolean;
  /** Backend `transformation`, the traffic transformation's engine run after the traffic policies. */
  readonly transformation: RunPolicy | undefined;
  /** Backend `extAuth`, the traffic extAuth step run before the transformation (request-steps.ts). */
  readonly extAuth: CompiledTrafficPolicy | undefined;
  /**
   * The compiled policy of one sub-backend (AI provider) by name: `subBackends[name]` of the IR
   * policy when the translator wrote one, else this policy. Compiled with it, at config time.
   */
  subBackend(name: string): CompiledBackendPolicy;
  /** Feeds passive health with the status the request ended with (5xx covers connect failures). */
  recordOutcome(target: UpstreamTarget, status: number): void;
}

const NO_IDENTITY: RequestIdentity = Object.freeze({});
/** Compiled outside a runtime (tests, tools): extAuth services by `url` only, no shared connections. */
const NO_STEP_DEPS: BackendStepDeps = { logger: silentLogger };

export function compileBackendPolicy(
  policy: BackendPolicy,
  backend: UpstreamEndpoints,
  pools: UpstreamPools,
  onError: (message: string) => void,
  healthStates?: HealthStates,
  stepDeps: BackendStepDeps = NO_STEP_DEPS,
  kind: UpstreamKind = 'service',
): CompiledBackendPolicy {
  const invalid: InvalidPolicy[] = [...(policy.invalid ?? [])];
  const fail = (member: BackendMember, message: string) => {
    const source = policy.sources[member]?.join(', ') ?? 'ProxyPolicy';
    invalid.push({ source, message });
    onError(`${backend.key}: ${source}: ${message}`);
  };
  // Members this kind of upstream call cannot enforce yet: fail closed rather than forward without them.
  for (const { member, message } of unsupportedOn(kind, policy)) fail(member, message);
  const extAuth = compileBackendExtAuth(policy, stepDeps, (message) => fail('extAuth', message));

  let mechanism: TokenMechanism | undefined;
  try {
    mechanism = compileTokenMechanism(policy.auth);
  } catch (err) {
    fail('auth', (err as Error).message);
  }
  const locationError = policy.auth ? checkLocations(policy.auth) : undefined;
  if (locationError) fail('auth', locationError);

  let transformation: RunPolicy | undefined;
  if (policy.transformation) {
    try {
      transformation = compileTransformationPolicy(policy.transformation, 'backend.transformation');
    } catch (err) {
      fail('transformation', (err as Error).message);
    }
  }

  let unhealthy: Program | undefined;
  if (policy.health?.unhealthyCondition !== undefined) {
    const result = compile(policy.health.unhealthyCondition, { expect: ['bool'] });
    if (result.ok) unhealthy = result.program;
    else fail('health', `health.unhealthyCondition: ${result.error.message}`);
  }

  let settings: ReturnType<typeof connectionSettings>;
  try {
    settings = connectionSettings(policy);
  } catch (err) {
    fail('tunnel', (err as Error).message);
  }
  const targets: UpstreamTarget[] = settings
    ? backend.endpoints.all().map((t) => ({ ...t, dispatcher: pools.acquireWith({ host: t.host, port: t.port }, settings, backend.protocol) }))
    : [...backend.endpoints.all()];
  const indexOf = new Map(targets.map((t, i) => [t, i] as const));
  // With the runtime's HealthStates, evictions and scores carry over to the next config.
  const healthSources = policy.sources.health;
  const health = policy.health
    ? new PassiveHealth(policy.health, healthStates ? targets.map((t) => healthStates.get(HealthStates.key(backend.key, healthSources, t.host, t.port))) : targets.length)
    : undefined;
  const ownTargets = settings ? new RoundRobin(targets) : undefined;

  const auth = policy.auth;
  const identityOf = (ctx: PolicyContext | undefined) => ctx?.identity ?? NO_IDENTITY;
  const cloud = usesCloudCredentials(auth);
  const prepare: CompiledBackendPolicy['prepare'] = !auth
    ? (headers, path) => ({ headers, path })
    : cloud
      ? compileCloudCredentials(auth)
      : mechanism
      ? async (headers, path, ctx) => {
        const token = await mechanism.token(ctx);
        const out = applyBackendCredentials(headers, path, auth, identityOf(ctx));
        return writeCredential(out.headers, out.path, mechanism.location, token);
      }
      : (headers, path, ctx) => applyBackendCredentials(headers, path, auth, identityOf(ctx));

  const subBackends = new Map<string, CompiledBackendPolicy>();
  // AI providers are sub-backends with a policy of their own; of an MCP target's, only its request
  // steps (extAuth, transformation) run here — its credentials, connections and failures stay the MCP handler's.
  for (const [name, sub] of kind === 'ai' ? Object.entries(policy.subBackends ?? {}) : kind === 'mcp' ? Object.entries(policy.subBackends ?? {}).flatMap((entry) => mcpRequestSteps(policy, entry)) : []) {
    subBackends.set(name, compileBackendPolicy(sub, backend, pools, (m) => onError(`${name}: ${m}`), healthStates, stepDeps, kind));
  }
  const self: CompiledBackendPolicy = {
    invalid,
    requestTimeoutMs: policy.http?.requestTimeoutMs !== undefined && policy.http.requestTimeoutMs > 0 ? policy.http.requestTimeoutMs : undefined,
    dispatchers: settings ? targets.map((t) => t.dispatcher) : [],
    connection: settings,
    pickTarget: health ? () => targets[health.pick() ?? -1] : ownTargets ? () => ownTargets.next() : () => undefined,
    prepare,
    needsCall: cloud,
    // A provider's or target's own steps need the request context as much as the route's do; cloud credentials read its method and CEL input.
    needsContext: cloud || transformation !== undefined || extAuth !== undefined || mechanism?.needsRequest === true || [...subBackends.values()].some((s) => s.needsContext),
    addsResponseEffects: transformation !== undefined || extAuth !== undefined || [...subBackends.values()].some((s) => s.addsResponseEffects),
    transformation,
    extAuth,
    subBackend: (name) => subBackends.get(name) ?? self,
    recordOutcome(target, status) {
      const index = indexOf.get(target);
      if (!health || index === undefined) return;
      health.record(index, healthOutcome(unhealthy, status, backend.key));
    },
  };
  return self;
}

function checkLocations(auth: NonNullable<BackendPolicy['auth']>): string | undefined {
  const writable = (l: CredentialLocation | undefined) => !l || l.header !== undefined || l.queryParameter !== undefined || l.cookie !== undefined;
  if (!writable(auth.location)) return 'auth.location must be a header, query parameter or cookie';
  if (!(auth.credentials ?? []).every((c) => writable(c.location))) return 'auth.credentials[].location must be a header, query parameter or cookie';
  return undefined;
}

/**
 * Compiles the backend policies of one config, once per IR object × backend (the IR is
 * immutable, so identity is a safe cache key), and collects the pools they dispatch to.
 */
export class BackendPolicyCompiler {
  readonly #pools: UpstreamPools;
  readonly #onError: (message: string) => void;
  readonly #healthStates: HealthStates | undefined;
  readonly #stepDeps: BackendStepDeps;
  readonly #cache = new WeakMap<BackendPolicy, Map<string, CompiledBackendPolicy>>();
  readonly dispatchers = new Set<Dispatcher>();

  constructor(pools: UpstreamPools, onError: (message: string) => void, healthStates?: HealthStates, stepDeps: BackendStepDeps = NO_STEP_DEPS) {
    this.#pools = pools;
    this.#onError = onError;
    this.#healthStates = healthStates;
    this.#stepDeps = stepDeps;
  }

  /** `kind` says which members the upstream call applies (support.ts); a backend is of one kind, so it is not part of the cache key. */
  compile(policy: BackendPolicy, backend: UpstreamEndpoints, kind: UpstreamKind = 'service'): CompiledBackendPolicy {
    let byBackend = this.#cache.get(policy);
    if (!byBackend) this.#cache.set(policy, (byBackend = new Map()));
    let compiled = byBackend.get(backend.key);
    if (!compiled) {
      compiled = compileBackendPolicy(policy, backend, this.#pools, this.#onError, this.#healthStates, this.#stepDeps, kind);
      byBackend.set(backend.key, compiled);
      for (const d of compiled.dispatchers) this.dispatchers.add(d);
    }
    return compiled;
  }
}

/**
 * An MCP target's policy reduced to the request steps of its own (members it sets differently from
 * the route: they run per call to the target, mcp/upstream/target-gate.ts); none: not compiled here.
 */
function mcpRequestSteps(route: BackendPolicy, [name, p]: [string, BackendPolicy]): [string, BackendPolicy][] {
  const own = ownMembers(route, p, ['extAuth', 'transformation']);
  if (own.length === 0) return [];
  return [[name, { sources: p.sources, ...(own.includes('extAuth') ? { extAuth: p.extAuth } : {}), ...(own.includes('transformation') ? { transformation: p.transformation } : {}) }]];
}
