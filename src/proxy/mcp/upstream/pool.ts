import { Agent } from 'undici';
import type { McpTargetIR } from '../../../ir/mcp.ts';
import type { Endpoint } from '../../../ir/types.ts';
import type { UpstreamSession } from '../session-codec.ts';
import type { UpstreamAddress, UpstreamClient } from './client.ts';
import { LegacySseClient } from './legacy-sse.ts';
import { StreamableHttpClient } from './streamable.ts';

const CONNECT_TIMEOUT_MS = 10_000;

function authority(host: string, port: number): string {
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}

/** undici origin of a target: `http(s)://host:port` (IPv6 literals bracketed). */
export function originOf(target: McpTargetIR): string {
  return `${target.tls ? 'https' : 'http'}://${authority(target.host, target.port)}`;
}

/** The compact form an endpoint is pinned by in the session state: `host:port`. */
export function endpointKey(endpoint: Endpoint): string {
  return authority(endpoint.host, endpoint.port);
}

interface TargetEntry {
  readonly target: McpTargetIR;
  /** One Agent per target (TLS settings and SNI stay per target); it keeps a Pool per origin, i.e. per endpoint. */
  readonly agent: Agent;
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
      this.#entries.set(target.name, {
        target,
        endpoints,
        known: new Set(endpoints),
        next: 0,
        agent: new Agent({
          connectTimeout: CONNECT_TIMEOUT_MS,
          connect: target.tls
            ? { servername: target.tls.sni ?? target.host, rejectUnauthorized: target.tls.insecureSkipVerify !== true, ...(target.tls.caCertificatePem ? { ca: target.tls.caCertificatePem } : {}) }
            : {},
        }),
      });
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

  /** A Streamable HTTP client, resuming `session` (on its pinned endpoint) when given, else on `endpoint`. */
  streamable(target: McpTargetIR, session?: UpstreamSession, endpoint?: string): StreamableHttpClient {
    return new StreamableHttpClient(target, this.#entry(target).agent, this.#address(target, session ? session.ep : endpoint), session);
  }

  /** A connected legacy SSE client (stream open, endpoint known). */
  async sse(target: McpTargetIR, signal?: AbortSignal, endpoint?: string): Promise<LegacySseClient> {
    const client = new LegacySseClient(target, this.#entry(target).agent, this.#address(target, endpoint));
    await client.connect(signal);
    return client;
  }

  /** A fresh, not yet initialised client of either transport, on `endpoint` (default: the next in turn). */
  async fresh(target: McpTargetIR, signal?: AbortSignal, endpoint: string | undefined = this.pick(target)): Promise<UpstreamClient> {
    return target.protocol === 'SSE' ? this.sse(target, signal, endpoint) : this.streamable(target, undefined, endpoint);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#entries.values()].map(({ agent }) => agent.close().catch(() => agent.destroy())));
  }

  #address(target: McpTargetIR, endpoint: string | undefined): UpstreamAddress {
    if (endpoint === undefined) return { origin: originOf(target) };
    if (!this.#entry(target).known.has(endpoint)) throw new Error(`MCP target ${target.name} has no endpoint ${endpoint}`);
    return { origin: `${target.tls ? 'https' : 'http'}://${endpoint}`, endpoint, host: authority(target.host, target.port) };
  }

  #entry(target: McpTargetIR): TargetEntry {
    const entry = this.#entries.get(target.name);
    if (!entry) throw new Error(`unknown MCP target ${target.name}`);
    return entry;
  }
}
