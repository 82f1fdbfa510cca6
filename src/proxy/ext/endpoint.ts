/**
 * Where an external service (ext_authz, ext_proc, rate-limit service, remote JWKS …) lives. The
 * IR names it as a `PolicyEndpoint` (a resolved backend key or an opaque URL); the pipeline
 * supplies a resolver that turns it into its targets — one for a URL, each ready endpoint of a
 * backend — so the clients here never read the backend table themselves. Clients spread their
 * calls over the targets with `next()` (round robin).
 */
import type { ConnectionOptions } from 'node:tls';
import type * as GrpcTransport from './grpc-transport.ts';
import type { Transport } from '@connectrpc/connect';
import type { PolicyEndpoint } from '../../ir/policy.ts';
import { lazyModule } from '../../common/lazy-module.ts';

// Loaded when a client first opens a channel (at compile time): see lazy-module.ts.
const grpcTransport = lazyModule<typeof GrpcTransport>(import.meta.url, './grpc-transport.ts');

/** Node TLS options a target is spoken to with (a backend's `tls` policy, resolved). */
export type TargetTls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized' | 'checkServerIdentity' | 'ecdhCurve'>;

export interface ResolvedEndpoint {
  readonly host: string;
  readonly port: number;
  /** Present (true or Node TLS options such as `ca`, `servername`) to speak TLS. */
  readonly tls?: boolean | TargetTls;
  /** Path prefix from a URL endpoint (`https://auth.example.com/authz` → `/authz`), no trailing slash. */
  readonly pathPrefix?: string;
  /**
   * Fingerprint of the connection settings `tls` came from (a backend's policy): part of the
   * shared-connection key, since `checkServerIdentity` (the SANs to accept) does not serialise.
   */
  readonly settings?: string;
  /** tcp.connectTimeout of the backend's policy (HTTP clients; a gRPC session has no connect timeout of its own). */
  readonly connectTimeoutMs?: number;
}

/** The addresses of one external service: the calls are spread over `all` by `next()`. */
export interface ServiceTargets {
  /** At least one. */
  readonly all: readonly ResolvedEndpoint[];
  /** The target of the next call (round robin). */
  next(): ResolvedEndpoint;
}

/** Round robin over a fixed, non-empty list (a resolver checks it is not empty). */
export class RoundRobinTargets implements ServiceTargets {
  readonly all: readonly ResolvedEndpoint[];
  #cursor = 0;

  constructor(all: readonly ResolvedEndpoint[]) {
    if (all.length === 0) throw new Error('an external service needs at least one target');
    this.all = all;
  }

  next(): ResolvedEndpoint {
    const target = this.all[this.#cursor];
    this.#cursor = this.#cursor + 1 === this.all.length ? 0 : this.#cursor + 1;
    return target;
  }
}

export type EndpointResolver = (endpoint: PolicyEndpoint) => ServiceTargets;

/** `FailClosed` (default) denies when the service is unavailable or fails; `FailOpen` continues. */
export type FailureMode = 'FailClosed' | 'FailOpen';

/** Resolves a `url` endpoint by itself; a `backendKey` needs the pipeline's resolver. */
export function resolveUrlEndpoint(endpoint: PolicyEndpoint): ResolvedEndpoint {
  if (endpoint.url === undefined) throw new Error(`endpoint ${endpoint.backendKey ?? '(empty)'} has no URL; a resolver for backends is required`);
  const url = new URL(endpoint.url);
  const secure = url.protocol === 'https:';
  const path = url.pathname.replace(/\/+$/, '');
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    ...(secure ? { tls: true } : {}),
    ...(path ? { pathPrefix: path } : {}),
  };
}

/** Uses `resolver` for backend keys and parses URLs directly (a URL is one target). */
export function withUrlFallback(resolver: EndpointResolver | undefined): EndpointResolver {
  return (endpoint) => (endpoint.backendKey !== undefined && resolver ? resolver(endpoint) : new RoundRobinTargets([resolveUrlEndpoint(endpoint)]));
}

/** Keys of targets already seen: a target object lives as long as its backend's IR object, and a call picks one per request. */
const keys = new WeakMap<ResolvedEndpoint, string>();

/** Endpoint and connection settings: two targets with the same key may share a connection. */
export function targetKey(target: ResolvedEndpoint): string {
  let key = keys.get(target);
  if (key === undefined) {
    key = JSON.stringify([baseUrl({ ...target, pathPrefix: undefined }), typeof target.tls === 'object' ? target.tls : target.tls === true, target.settings ?? null, target.connectTimeoutMs ?? null]);
    keys.set(target, key);
  }
  return key;
}

export function baseUrl(target: ResolvedEndpoint): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `${target.tls ? 'https' : 'http'}://${host}:${target.port}${target.pathPrefix ?? ''}`;
}

export interface GrpcChannel {
  readonly transport: Transport;
  /** Closes the HTTP/2 session; calls in flight fail. */
  close(): void;
}

/** Where clients get their connections: the runtime's shared ones (see connections.ts). */
export interface ConnectionSource {
  grpc(target: ResolvedEndpoint): GrpcChannel;
}

/**
 * A gRPC (HTTP/2) channel shared by every request of a policy: per target, the session manager
 * keeps one HTTP/2 session, reconnects after failures and closes the session when idle; each call
 * (unary or stream) goes to the next target. With `shared` (the runtime's connections) a client
 * for the same endpoint and settings reuses its session across config versions; without it the
 * sessions are the client's own.
 */
export function grpcChannel(targets: ServiceTargets, shared?: ConnectionSource): GrpcChannel {
  const open = (target: ResolvedEndpoint) => (shared ? shared.grpc(target) : privateGrpcChannel(target));
  // A fixed single target needs no picking; live targets (liveTargets) may gain endpoints later.
  if (targets instanceof RoundRobinTargets && targets.all.length === 1) return open(targets.all[0]);
  // By endpoint and settings: a newer config's equal endpoint reuses its session.
  const channels = new Map<string, GrpcChannel>();
  const channelFor = (target: ResolvedEndpoint): GrpcChannel => {
    const key = targetKey(target);
    let channel = channels.get(key);
    if (!channel) channels.set(key, (channel = open(target)));
    return channel;
  };
  for (const t of targets.all) channelFor(t);
  const pick = (): Transport => channelFor(targets.next()).transport;
  const transport: Transport = {
    unary: (...args) => pick().unary(...args),
    stream: (...args) => pick().stream(...args),
  };
  return { transport, close: () => { for (const c of channels.values()) c.close(); } };
}

/**
 * Largest message accepted from an external gRPC service (ext_proc, ext_authz, rate limit): room
 * for a processor's replacement of a buffered body (ext_proc buffers 2 MiB by default). Larger
 * fails the call (RESOURCE_EXHAUSTED), which the member answers per its failure mode.
 */
export const MAX_GRPC_MESSAGE_BYTES = 16 * 1024 * 1024;

export function privateGrpcChannel(target: ResolvedEndpoint): GrpcChannel {
  const url = baseUrl({ ...target, pathPrefix: undefined });
  const { createGrpcTransport, Http2SessionManager } = grpcTransport();
  const sessions = new Http2SessionManager(url, { idleConnectionTimeoutMs: 30_000 }, typeof target.tls === 'object' ? target.tls : {});
  const transport = createGrpcTransport({ baseUrl: url, sessionManager: sessions, readMaxBytes: MAX_GRPC_MESSAGE_BYTES });
  return { transport, close: () => sessions.abort() };
}
