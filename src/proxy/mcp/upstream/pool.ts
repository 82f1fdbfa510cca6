import { Agent, type Dispatcher } from 'undici';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { BackendPolicy } from '../../../ir/policy.ts';
import type { Endpoint } from '../../../ir/types.ts';
import { connectorFor, type ConnectionSettings } from '../../policies/backend/connection.ts';
import type { UpstreamSession } from '../session-codec.ts';
import { FailedClient, type UpstreamAddress, type UpstreamClient, type UpstreamLink } from './client.ts';
import { LegacySseClient } from './legacy-sse.ts';
import { compileTargetAccess, targetPolicy, NO_UPSTREAM_CONTEXT, type TargetAccess, type UpstreamContext } from './policy.ts';
import { StreamableHttpClient } from './streamable.ts';

const CONNECT_TIMEOUT_MS = 10_000;

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
}

/**
 * Connection pools per target and the factory of upstream clients. A Service target with
 * endpoints is reached at one of them: a new upstream session takes the next in turn
 * (round-robin per target), a resumed one the endpoint it was opened on. Streamable HTTP
 * clients are cheap views over a pool and an upstream session id; SSE clients own a live stream.
 */
export class UpstreamPool {
  readonly #entries = new Map<string, TargetEntry>();

  constructor(targets: readonly McpTargetIR[]) {
    for (const target of targets) {
      const endpoints = [...new Set((target.endpoints ?? []).map(endpointKey))];
      this.#entries.set(target.name, { target, endpoints, known: new Set(endpoints), next: 0, agents: new Map(), access: new WeakMap(), plain: undefined });
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

  /** The endpoint a new upstream session of `target` opens on (round-robin), or undefined for the host. */
  pick(target: McpTargetIR): string | undefined {
    const entry = this.#entry(target);
    if (entry.endpoints.length === 0) return undefined;
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

  /** A fresh, not yet initialised client of either transport, on `endpoint` (default: the next in turn). */
  async fresh(target: McpTargetIR, signal?: AbortSignal, endpoint: string | undefined = this.pick(target), ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): Promise<UpstreamClient> {
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
    return { dispatcher: this.#agent(target, access.settings), address: this.#address(target, endpoint, access.settings?.tls !== undefined), access, policy: ctx.policy, ...(ctx.headers !== undefined ? { headers: ctx.headers } : {}) };
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
