/**
 * Connections to external services (ext_authz, ext_proc, rate-limit service) shared across
 * config versions. Every compiled client takes a lease on the connection for its endpoint and
 * settings; a config swap compiles the new clients (new leases) before the old config is retired
 * (old leases released), so an endpoint both versions use keeps its HTTP/2 session, and one only
 * the old version used is closed once its last lease goes.
 */
import { Agent } from 'undici';
import { privateGrpcChannel, targetKey, type GrpcChannel, type ResolvedEndpoint } from './endpoint.ts';

/** A shared resource held by one client; `close()` gives the lease back (idempotent). */
export interface Lease<T> {
  readonly value: T;
  close(): void;
}

interface Entry<T> {
  readonly value: T;
  refs: number;
}

/** Resources by key with reference counts; the last release destroys one. */
export class SharedPool<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #destroy: (value: T) => void;

  constructor(destroy: (value: T) => void) {
    this.#destroy = destroy;
  }

  /** The resource under `key`, made by `create` when there is none yet. */
  acquire(key: string, create: () => T): Lease<T> {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { value: create(), refs: 0 };
      this.#entries.set(key, entry);
    }
    entry.refs++;
    const held = entry;
    let released = false;
    return {
      value: held.value,
      close: () => {
        if (released) return;
        released = true;
        if (--held.refs > 0 || this.#entries.get(key) !== held) return;
        this.#entries.delete(key);
        this.#destroy(held.value);
      },
    };
  }

  /** How many distinct resources are open (tests, debugging). */
  get size(): number {
    return this.#entries.size;
  }

  /** Destroys everything, leased or not (the runtime is closing). */
  closeAll(): void {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const e of entries) this.#destroy(e.value);
  }
}

/** Endpoint and TLS settings: two clients with the same key may share a connection. */
export function connectionKey(target: ResolvedEndpoint): string {
  return targetKey(target);
}

/** The runtime's shared connections to external services. */
export class SharedConnections {
  readonly #grpc = new SharedPool<GrpcChannel>((c) => c.close());
  readonly #http = new SharedPool<Agent>((agent) => void agent.close());

  /** A gRPC (HTTP/2) channel to `target`; its `close()` releases this client's share. */
  grpc(target: ResolvedEndpoint): GrpcChannel {
    const lease = this.#grpc.acquire(connectionKey(target), () => privateGrpcChannel(target));
    return { transport: lease.value.transport, close: lease.close };
  }

  /** An HTTP connection pool (undici Agent) for `target`'s TLS settings (the key includes the origin). */
  http(target: ResolvedEndpoint): Lease<Agent> {
    return this.#http.acquire(connectionKey(target), () => httpAgent(target));
  }

  /** Open channels and agents (tests, debugging). */
  get open(): { readonly grpc: number; readonly http: number } {
    return { grpc: this.#grpc.size, http: this.#http.size };
  }

  closeAll(): void {
    this.#grpc.closeAll();
    this.#http.closeAll();
  }
}

/** An undici Agent speaking to `target` with its TLS settings and connect timeout. */
export function httpAgent(target: ResolvedEndpoint): Agent {
  return new Agent({ connect: { ...(typeof target.tls === 'object' ? target.tls : {}), ...(target.connectTimeoutMs !== undefined ? { timeout: target.connectTimeoutMs } : {}) } });
}

/**
 * HTTP pools for each target of an external service: the runtime's shared ones (leases) or the
 * client's own. Targets met after construction (a live resolver) get theirs on first use.
 */
export class TargetAgents {
  /** By endpoint and settings (targetKey): a newer config's equal endpoint reuses its pool. */
  readonly #agents = new Map<string, Lease<Agent>>();
  readonly #shared: SharedConnections | undefined;

  constructor(targets: readonly ResolvedEndpoint[], shared?: SharedConnections) {
    this.#shared = shared;
    for (const t of targets) this.get(t);
  }

  get(target: ResolvedEndpoint): Agent {
    const key = targetKey(target);
    let lease = this.#agents.get(key);
    if (!lease) {
      if (this.#shared) lease = this.#shared.http(target);
      else {
        const agent = httpAgent(target);
        lease = { value: agent, close: () => void agent.close() };
      }
      this.#agents.set(key, lease);
    }
    return lease.value;
  }

  close(): void {
    for (const lease of this.#agents.values()) lease.close();
    this.#agents.clear();
  }
}
