/**
 * Where an external service (ext_authz, ext_proc, rate-limit service) lives. The IR names it as a
 * `PolicyEndpoint` (a resolved backend key or an opaque URL); the pipeline supplies a resolver that
 * turns it into a host and port, so the clients here never read the backend table themselves.
 */
import type { SecureClientSessionOptions } from 'node:http2';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import type { Transport } from '@connectrpc/connect';
import type { PolicyEndpoint } from '../../ir/policy.ts';

export interface ResolvedEndpoint {
  readonly host: string;
  readonly port: number;
  /** Present (true or Node TLS options such as `ca`, `servername`) to speak TLS. */
  readonly tls?: boolean | Pick<SecureClientSessionOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>;
  /** Path prefix from a URL endpoint (`https://auth.example.com/authz` → `/authz`), no trailing slash. */
  readonly pathPrefix?: string;
}

export type EndpointResolver = (endpoint: PolicyEndpoint) => ResolvedEndpoint;

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

/** Uses `resolver` for backend keys and parses URLs directly. */
export function withUrlFallback(resolver: EndpointResolver | undefined): EndpointResolver {
  return (endpoint) => (endpoint.backendKey !== undefined && resolver ? resolver(endpoint) : resolveUrlEndpoint(endpoint));
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
 * A gRPC (HTTP/2) channel shared by every request of a policy: the session manager keeps one
 * HTTP/2 session, reconnects after failures and closes the session when idle. With `shared`
 * (the runtime's connections) a client for the same endpoint and settings reuses its channel
 * across config versions; without it the channel is the client's own.
 */
export function grpcChannel(target: ResolvedEndpoint, shared?: ConnectionSource): GrpcChannel {
  return shared ? shared.grpc(target) : privateGrpcChannel(target);
}

/**
 * Largest message accepted from an external gRPC service (ext_proc, ext_authz, rate limit): room
 * for a processor's replacement of a buffered body (ext_proc buffers 2 MiB by default). Larger
 * fails the call (RESOURCE_EXHAUSTED), which the member answers per its failure mode.
 */
export const MAX_GRPC_MESSAGE_BYTES = 16 * 1024 * 1024;

export function privateGrpcChannel(target: ResolvedEndpoint): GrpcChannel {
  const url = baseUrl({ ...target, pathPrefix: undefined });
  const sessions = new Http2SessionManager(url, { idleConnectionTimeoutMs: 30_000 }, typeof target.tls === 'object' ? target.tls : {});
  const transport = createGrpcTransport({ baseUrl: url, sessionManager: sessions, readMaxBytes: MAX_GRPC_MESSAGE_BYTES });
  return { transport, close: () => sessions.abort() };
}
