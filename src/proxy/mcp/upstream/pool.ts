import { Agent } from 'undici';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { UpstreamSession } from '../session-codec.ts';
import type { UpstreamClient } from './client.ts';
import { LegacySseClient } from './legacy-sse.ts';
import { StreamableHttpClient } from './streamable.ts';

const CONNECT_TIMEOUT_MS = 10_000;

/** undici origin of a target: `http(s)://host:port` (IPv6 literals bracketed). */
export function originOf(target: McpTargetIR): string {
  const host = target.host.includes(':') && !target.host.startsWith('[') ? `[${target.host}]` : target.host;
  return `${target.tls ? 'https' : 'http'}://${host}:${target.port}`;
}

/**
 * Connection pools per target (one undici Agent each, so TLS settings stay per target) and the
 * factory of upstream clients. Streamable HTTP clients are cheap views over a pool and an
 * upstream session id; SSE clients own a live stream.
 */
export class UpstreamPool {
  readonly #agents = new Map<string, Agent>();
  readonly #targets: ReadonlyMap<string, McpTargetIR>;

  constructor(targets: readonly McpTargetIR[]) {
    this.#targets = new Map(targets.map((t) => [t.name, t]));
    for (const target of targets) {
      this.#agents.set(target.name, new Agent({
        connectTimeout: CONNECT_TIMEOUT_MS,
        connect: target.tls
          ? { servername: target.tls.sni ?? target.host, rejectUnauthorized: target.tls.insecureSkipVerify !== true, ...(target.tls.caCertificatePem ? { ca: target.tls.caCertificatePem } : {}) }
          : {},
      }));
    }
  }

  target(name: string): McpTargetIR | undefined {
    return this.#targets.get(name);
  }

  /** A Streamable HTTP client, resuming `session` when given. */
  streamable(target: McpTargetIR, session?: UpstreamSession): StreamableHttpClient {
    return new StreamableHttpClient(target, this.#agent(target), originOf(target), session);
  }

  /** A connected legacy SSE client (stream open, endpoint known). */
  async sse(target: McpTargetIR, signal?: AbortSignal): Promise<LegacySseClient> {
    const client = new LegacySseClient(target, this.#agent(target), originOf(target));
    await client.connect(signal);
    return client;
  }

  /** A fresh, not yet initialised client of either transport. */
  async fresh(target: McpTargetIR, signal?: AbortSignal): Promise<UpstreamClient> {
    return target.protocol === 'SSE' ? this.sse(target, signal) : this.streamable(target);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#agents.values()].map((a) => a.close().catch(() => a.destroy())));
  }

  #agent(target: McpTargetIR): Agent {
    const agent = this.#agents.get(target.name);
    if (!agent) throw new Error(`unknown MCP target ${target.name}`);
    return agent;
  }
}
