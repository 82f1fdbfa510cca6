import type { Logger } from '../../common/logger.ts';
import type { McpBackendIR } from '../../ir/mcp.ts';
import { GATEWAY_VERSION, initializeAll, initializeTarget, LATEST_SESSION_PROTOCOL, mergeInitialize } from './initialize.ts';
import type { Params } from './jsonrpc.ts';
import { decodeSession, encodeSession, type SessionState, type UpstreamSession } from './session-codec.ts';
import type { SessionKeySelector } from './session-keys.ts';
import { UpstreamError, type UpstreamClient } from './upstream/client.ts';
import type { UpstreamPool } from './upstream/pool.ts';
import { NO_UPSTREAM_CONTEXT, type UpstreamContext } from './upstream/policy.ts';

/** Live SSE upstream streams kept for sessions of this process; older ones are closed first beyond this. */
const MAX_LIVE_SESSIONS = 10_000;
const LIVE_IDLE_MS = 30 * 60_000;

export interface OpenSession {
  readonly clients: ReadonlyMap<string, UpstreamClient>;
  /** Stateless sessions end with the request: closes their upstream sessions. */
  readonly release: () => Promise<void>;
}

interface Live {
  readonly clients: Map<string, UpstreamClient>;
  lastUsed: number;
}

/**
 * Gateway sessions. Stateful: the session id is the encrypted SessionState (session-codec.ts),
 * so Streamable HTTP upstream sessions resume on any replica; legacy SSE upstream streams live
 * in this process and are re-established (initialize replayed) where they are missing.
 * Stateless: every request opens short upstream sessions and closes them afterwards.
 */
export class SessionManager {
  readonly #backend: McpBackendIR;
  readonly #pool: UpstreamPool;
  readonly #keys: SessionKeySelector;
  readonly #logger: Logger;
  readonly #live = new Map<string, Live>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(backend: McpBackendIR, pool: UpstreamPool, keys: SessionKeySelector, logger: Logger) {
    this.#backend = backend;
    this.#pool = pool;
    this.#keys = keys;
    this.#logger = logger;
    this.#sweeper = setInterval(() => this.#sweep(), 60_000);
    this.#sweeper.unref();
  }

  get stateful(): boolean {
    return this.#backend.sessionRouting === 'Stateful';
  }

  /** Initialises every target: the merged result, the session id (Stateful) and the joined clients. */
  async create(clientParams: Params, signal?: AbortSignal, ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): Promise<{ result: Record<string, unknown>; id?: string; clients: Map<string, UpstreamClient> }> {
    const joined = await initializeAll(this.#pool, this.#backend.targets, clientParams, this.#backend.failureMode, this.#logger, signal, ctx);
    const result = mergeInitialize(joined, this.#backend.serverName ?? 'switchboard');
    const clients = new Map([...joined].map(([name, j]) => [name, j.client]));
    if (!this.stateful) return { result, clients };
    const targets: Record<string, UpstreamSession> = {};
    for (const [name, { client }] of joined) {
      targets[name] = {
        ...(client.sessionId !== undefined ? { sid: client.sessionId } : {}),
        pv: client.protocolVersion ?? String(result.protocolVersion),
        ...(client.endpoint !== undefined ? { ep: client.endpoint } : {}),
      };
    }
    const state: SessionState = { pv: String(result.protocolVersion), targets, client: clientParams, iat: Math.floor(Date.now() / 1000) };
    // Sealed with the key of the Gateway the request came through (session-keys.ts).
    const id = encodeSession(state, this.#keys.forGateway(ctx.gateway), this.#backend.key);
    const sse = [...joined].filter(([name]) => this.#pool.target(name)?.protocol === 'SSE');
    if (sse.length > 0) this.#remember(id, new Map(sse.map(([name, j]) => [name, j.client])));
    return { result, id, clients };
  }

  /**
   * The joined clients of a Stateful session id; undefined for an unknown, tampered or foreign id
   * (404). Streamable HTTP upstream sessions are resumed on the endpoint they were opened on;
   * when that endpoint has left the config, the upstream session is unreachable: it throws
   * `session_expired` (404, the client initialises again) rather than hop to another replica.
   */
  async resume(id: string, signal?: AbortSignal, ctx: UpstreamContext = NO_UPSTREAM_CONTEXT): Promise<OpenSession | undefined> {
    const state = decodeSession(id, this.#keys.forGateway(ctx.gateway), this.#backend.key);
    if (!state) return undefined;
    for (const [name, upstream] of Object.entries(state.targets)) {
      const target = this.#pool.target(name);
      if (target?.protocol === 'StreamableHTTP' && !this.#pool.reachable(target, upstream.ep)) {
        throw new UpstreamError(name, 'session_expired', `the endpoint ${String(upstream.ep)} holding the upstream session is no longer in the config`);
      }
    }
    const clients = new Map<string, UpstreamClient>();
    const live = this.#live.get(id);
    if (live) live.lastUsed = Date.now();
    const missing: Promise<void>[] = [];
    for (const [name, upstream] of Object.entries(state.targets)) {
      const target = this.#pool.target(name);
      if (!target) continue;
      if (target.protocol === 'StreamableHTTP') {
        clients.set(name, this.#pool.streamable(target, upstream, undefined, ctx));
        continue;
      }
      const existing = live?.clients.get(name);
      if (existing) {
        clients.set(name, existing);
        continue;
      }
      // A new SSE upstream session either way: on the pinned endpoint while it exists, else the next in turn.
      missing.push(initializeTarget(this.#pool, target, state.client, signal, this.#pool.reachable(target, upstream.ep) ? upstream.ep : undefined, ctx).then((j) => {
        clients.set(name, j.client);
        this.#remember(id, new Map([[name, j.client]]));
        this.#logger.info({ target: name }, 'MCP: re-established an SSE upstream session in this process');
      }));
    }
    await Promise.all(missing);
    return { clients, release: () => Promise.resolve() };
  }

  /** Per-request upstream sessions (Stateless, and every request of a stateless-era client). */
  async ephemeral(
    protocolVersion: string | undefined, signal?: AbortSignal, clientParams?: Params, ctx: UpstreamContext = NO_UPSTREAM_CONTEXT,
  ): Promise<OpenSession & { readonly result: Record<string, unknown> }> {
    const params = clientParams ?? { protocolVersion: protocolVersion ?? LATEST_SESSION_PROTOCOL, capabilities: {}, clientInfo: { name: 'switchboard', version: GATEWAY_VERSION } };
    const joined = await initializeAll(this.#pool, this.#backend.targets, params, this.#backend.failureMode, this.#logger, signal, ctx);
    const clients = new Map([...joined].map(([name, j]) => [name, j.client]));
    return { clients, result: mergeInitialize(joined, this.#backend.serverName ?? 'switchboard'), release: () => closeAll(clients) };
  }

  /** DELETE of a session: ends every upstream session. */
  async terminate(id: string, clients: ReadonlyMap<string, UpstreamClient>): Promise<void> {
    this.#live.delete(id);
    await closeAll(clients);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const all = [...this.#live.values()];
    this.#live.clear();
    await Promise.all(all.map((l) => closeAll(l.clients)));
  }

  #remember(id: string, clients: Map<string, UpstreamClient>): void {
    const live = this.#live.get(id);
    if (live) {
      for (const [name, client] of clients) live.clients.set(name, client);
      live.lastUsed = Date.now();
      return;
    }
    if (this.#live.size >= MAX_LIVE_SESSIONS) {
      const oldest = this.#live.keys().next().value;
      if (oldest !== undefined) this.#evict(oldest);
    }
    this.#live.set(id, { clients, lastUsed: Date.now() });
  }

  #sweep(): void {
    const cutoff = Date.now() - LIVE_IDLE_MS;
    for (const [id, live] of this.#live) if (live.lastUsed < cutoff) this.#evict(id);
  }

  #evict(id: string): void {
    const live = this.#live.get(id);
    this.#live.delete(id);
    if (live) void closeAll(live.clients);
  }
}

export async function closeAll(clients: ReadonlyMap<string, UpstreamClient>): Promise<void> {
  await Promise.all([...clients.values()].map((c) => c.close()));
}
