import { Agent, type Dispatcher } from 'undici';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { Endpoint } from '../../../ir/types.ts';
import { connectorFor, type ConnectionSettings } from '../../policies/backend/connection.ts';
import { HealthStates, PassiveHealth, healthOutcome } from '../../policies/backend/health.ts';
import type { UpstreamSession } from '../session-codec.ts';
import { FailedClient, type EndpointHealthView, type UpstreamAddress, type UpstreamClient, type UpstreamLink } from './client.ts';
import { LegacySseClient } from './legacy-sse.ts';
import { compileTargetAccess, targetPolicy, NO_UPSTREAM_CONTEXT, type TargetAccess, type TargetHealthPolicy, type UpstreamContext } from './policy.ts';
import { StreamableHttpClient } from './streamable.ts';

const CONNECT_TIMEOUT_MS = 10_000;

function evictedReason(target: McpTargetIR, endpoint: string | undefined): string {
  return `MCP target "${target.name}"${endpoint !== undefined ? ` (endpoint ${endpoint})` : ''} is evicted by its backend health policy`;
}

function authority(host: string, port: number): string {
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** undici origin of a target reached by its host: `http(s)://host:port` (IPv6 literals bracketed). */
export function originOf(target: McpTargetIR, https: boolean): string {
  return `${https ? 'https' : 'http'}://${authority(target.host, target.port)}`;
}

/** The compact form an endpoint is pinned by in the session state: `host:port`. */
export function endpointKey(endpoint: Endpoint): string {
  return authority(endpoint.host, endpoint.port);
}

interface TargetEntry {
  readonly target: McpTargetIR;
  /**
   * One Agent per target and connection settings (TLS, SNI, HTTP version stay per target and
   * policy); each keeps a Pool per origin, i.e. per endpoint. Kept until the pool closes.
   */
  readonly agents: Map<string, Dispatcher>;
  /** The target's compiled access per route backend policy (config objects: identity is the key). */
  readonly access: WeakMap<BackendPolicy, TargetAccess>;
  /** Without a route backend policy. */
  plain: TargetAccess | undefined;
  /** Endpoint keys in config order; empty when the target is reached by its host. */
  readonly endpoints: readonly string[];
  readonly known: ReadonlySet<string>;
  next: number;
  /** Passive health per compiled `health` member, over endpoint states shared by every policy (the pool's HealthStates). */
  readonly health: WeakMap<TargetHealthPolicy, PassiveHealth>;
}

/**
 * Connection pools per target and the factory of upstream clients. A Service target with
 * endpoints is reached at one of them: a new upstream session takes the next in turn
 * (round-robin per target), a resumed one the endpoint it was opened on. Streamable HTTP
 * clients are cheap views over a pool and an upstream session id; SSE clients own a live stream.
 */
export class UpstreamPool {
  readonly #entries = new Map<string, TargetEntry>();
  /** Endpoint health by target and address: one state per endpoint, whichever route's policy tracks it. */
  readonly #healthStates = new HealthStates();

  constructor(targets: readonly McpTargetIR[]) {
    for (const target of targets) {
      const endpoints = [...new Set((target.endpoints ?? []).map(endpointKey))];
      this.#entries.set(target.name, { target, endpoints, known: new Set(endpoints), next: 0, agents: new Map(), access: new WeakMap(), plain: undefined, health: new WeakMap() });
    }
  }

  target(name: string): McpTargetIR | undefined {
    return this.#entries.get(name)?.target;
  }

  /**
   * Whether an upstream session recorded with `endpoint` can still be reached: a session opened
   * by host name (no endpoint) always can; a pinned one only while its endpoint is in the config.
   */
  reachable(target: McpTargetIR, endpoint: string | undefined): boolean {
    return endpoint === undefined || this.#entry(target).known.has(endpoint);
  }

  /**
   * The endpoint a new upstream session of `target` opens on, or undefined for the host: round
   * robin, over the endpoints backend `health` has not evicted when the target's policy tracks
   * health (all of them when every one is evicted, as for Service endpoints).
   */
  pick(target: McpTargetIR, ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): string | undefined {
    const entry = this.#entry(target);
    if (entry.endpoints.length === 0) return undefined;
    const health = this.#health(entry, this.access(target, ctx));
    if (health) return entry.endpoints[health.pick() ?? 0];
    const endpoint = entry.endpoints[entry.next % entry.endpoints.length];
    entry.next = (entry.next + 1) % entry.endpoints.length;
    return endpoint;
  }

  /**
   * A Streamable HTTP client, resuming `session` (on its pinned endpoint) when given, else on
   * `endpoint`, under the target's effective backend policy for `ctx`. A target whose policy
   * cannot be applied gets a client that fails every call.
   */
  streamable(target: McpTargetIR, session?: UpstreamSession, endpoint?: string, ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): UpstreamClient {
    const link = this.#link(target, session ? session.ep : endpoint, ctx);
    return 'failure' in link ? new FailedClient(target.name, link.failure, session) : new StreamableHttpClient(target, link, session);
  }

  /** A connected legacy SSE client (stream open, endpoint known). */
  async sse(target: McpTargetIR, signal?: AbortSignal, endpoint?: string, ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): Promise<UpstreamClient> {
    const link = this.#link(target, endpoint, ctx);
    if ('failure' in link) return new FailedClient(target.name, link.failure);
    const client = new LegacySseClient(target, link);
    await client.connect(signal);
    return client;
  }

  /**
   * A fresh, not yet initialised client of either transport, on `endpoint` (default: the next in
   * turn). On an evicted endpoint (backend `health`) nothing is opened: the client fails every call as `evicted`.
   */
  async fresh(target: McpTargetIR, signal?: AbortSignal, endpoint: string | undefined = this.pick(target), ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): Promise<UpstreamClient> {
    const link = this.#link(target, endpoint, ctx);
    if (!('failure' in link) && link.health?.evicted() === true) return new FailedClient(target.name, evictedReason(target, endpoint), undefined, 'evicted');
    return target.protocol === 'SSE' ? this.sse(target, signal, endpoint, ctx) : this.streamable(target, undefined, endpoint, ctx);
  }

  async close(): Promise<void> {
    const agents = [...this.#entries.values()].flatMap((e) => [...e.agents.values()]);
    await Promise.all(agents.map((agent) => agent.close().catch(() => agent.destroy())));
  }

  /** The compiled effective policy of `target` for a request's context. */
  access(target: McpTargetIR, ctx: UpstreamContext): TargetAccess {
    const entry = this.#entry(target);
    const route = ctx.backendPolicy;
    if (route === undefined) return (entry.plain ??= compileTargetAccess(targetPolicy(undefined, target)));
    let access = entry.access.get(route);
    if (!access) entry.access.set(route, (access = compileTargetAccess(targetPolicy(route, target))));
    return access;
  }

  #link(target: McpTargetIR, endpoint: string | undefined, ctx: UpstreamContext): UpstreamLink | { failure: string } {
    const access = this.access(target, ctx);
    if (access.failure !== undefined) return { failure: access.failure };
    const retry = ctx.policy?.upstream.retry;
    const health = this.#endpointHealth(target, endpoint, access);
    const gate = ctx.gates?.for(target.name);
    return {
      dispatcher: this.#agent(target, access.settings), address: this.#address(target, endpoint, access.settings?.tls !== undefined), access, policy: ctx.policy,
      ...(ctx.headers !== undefined ? { headers: ctx.headers } : {}), ...(retry !== undefined ? { retry } : {}), ...(health !== undefined ? { health } : {}),
      ...(gate !== undefined ? { gate } : {}),
    };
  }

  /** The passive health of `target` under one compiled `health` member (undefined: the policy tracks none). */
  #health(entry: TargetEntry, access: TargetAccess): PassiveHealth | undefined {
    const policy = access.health;
    if (!policy) return undefined;
    let health = entry.health.get(policy);
    if (!health) {
      // A target reached by its host is one endpoint.
      const addresses = entry.endpoints.length > 0 ? entry.endpoints : [authority(entry.target.host, entry.target.port)];
      health = new PassiveHealth(policy.spec, addresses.map((a) => this.#healthStates.get(HealthStates.key(entry.target.name, [], a, 0))));
      entry.health.set(policy, health);
    }
    return health;
  }

  /** What a client on `endpoint` feeds and asks of passive health. */
  #endpointHealth(target: McpTargetIR, endpoint: string | undefined, access: TargetAccess): EndpointHealthView | undefined {
    const entry = this.#entry(target);
    const health = this.#health(entry, access);
    if (!health || !access.health) return undefined;
    const index = endpoint === undefined ? 0 : Math.max(0, entry.endpoints.indexOf(endpoint));
    const unhealthy = access.health.unhealthy;
    return {
      record: (status) => health.record(index, healthOutcome(unhealthy, status, target.name)),
      evicted: () => health.evicted(index),
    };
  }

  #agent(target: McpTargetIR, settings: ConnectionSettings | undefined): Dispatcher {
    const entry = this.#entry(target);
    const key = settings?.fingerprint ?? '-';
    let agent = entry.agents.get(key);
    if (agent) return agent;
    agent = settings
      // Our connector: SNI and the certificate check stay the target's name whichever endpoint is dialled.
      ? new Agent({ connect: connectorFor({ ...settings, connectTimeoutMs: settings.connectTimeoutMs ?? CONNECT_TIMEOUT_MS }, target.host), allowH2: settings.version === 'h2' })
      : new Agent({ connectTimeout: CONNECT_TIMEOUT_MS });
    entry.agents.set(key, agent);
    return agent;
  }

  #address(target: McpTargetIR, endpoint: string | undefined, https: boolean): UpstreamAddress {
    if (endpoint === undefined) return { origin: originOf(target, https) };
    if (!this.#entry(target).known.has(endpoint)) throw new Error(`MCP target ${target.name} has no endpoint ${endpoint}`);
    return { origin: `${https ? 'https' : 'http'}://${endpoint}`, endpoint, host: authority(target.host, target.port) };
  }

  #entry(target: McpTargetIR): TargetEntry {
    const entry = this.#entries.get(target.name);
    if (!entry) throw new Error(`unknown MCP target ${target.name}`);
    return entry;
  }
}
