/** Shapes shared by the gRPC and HTTP external-authorization clients and their cache. */
import type { Activation } from '../../../cel/index.ts';
import type { ExtAuthPolicy, JsonObject } from '../../../ir/policy.ts';
import type { SharedConnections } from '../connections.ts';
import type { EndpointResolver, FailureMode } from '../endpoint.ts';
import type { HeaderMutations, HeaderPair, RequestHeaders } from '../headers.ts';

/** The IR member `extAuth` (one direct entry, src/ir/members.ts): `forwardBody.maxSize` is in bytes. */
export type ExtAuthConfig = ExtAuthPolicy;

/** What the pipeline knows about the downstream request. */
export interface DownstreamRequest {
  readonly method: string;
  /** Path plus query, as received. */
  readonly url: string;
  readonly host: string;
  readonly scheme: 'http' | 'https';
  /** `HTTP/1.1`, `HTTP/2` … */
  readonly protocol: string;
  readonly headers: RequestHeaders;
  readonly source: { readonly address: string; readonly port: number };
  readonly destination: { readonly address: string; readonly port: number };
  /** The buffered body; the pipeline buffers it (up to `bodyLimit` + 1 bytes) when the client asks. */
  readonly body?: Uint8Array;
  /** x-request-id or the gateway's own id, forwarded to the service. */
  readonly id?: string;
}

export type DenyReason = 'denied' | 'unavailable' | 'body_too_large';

export type AuthzDecision =
  | {
      readonly allowed: true;
      /** Changes to the request sent upstream. */
      readonly requestHeaders: HeaderMutations;
      /** Headers added to the response sent downstream. */
      readonly responseHeaders: readonly HeaderPair[];
      /** Exposed to later CEL as the `extauthz` variable (HTTP `responseMetadata`, gRPC dynamic_metadata). */
      readonly metadata: JsonObject;
      /** Set when the service failed and FailOpen let the request through. */
      readonly failedOpen?: true;
      /** With failedOpen: why the service could not decide (for the log, never the response). */
      readonly cause?: string;
    }
  | {
      readonly allowed: false;
      readonly status: number;
      readonly body: string;
      readonly headers: readonly HeaderPair[];
      readonly reason: DenyReason;
      /** With `unavailable`: why the service could not decide (for the log, never the response). */
      readonly cause?: string;
    };

export interface ExtAuthzClient {
  /** Present when the request body must be buffered (forwardBody.maxSize). */
  readonly bodyLimit?: number;
  check(request: DownstreamRequest, activation: Activation, signal?: AbortSignal): Promise<AuthzDecision>;
  /** Closes connections to the service. */
  close(): void;
}

export interface ExtAuthzOptions {
  readonly resolve?: EndpointResolver;
  /** The runtime's shared connections: a client for an endpoint in use reuses its connection. */
  readonly connections?: SharedConnections;
  /** Deadline of one authorization call (default 1000 ms). */
  readonly timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 1000;

/**
 * Envoy's status_on_error: FailClosed answers 403 when the service cannot decide. `cause` says why
 * (a deadline, a refused connection, an answer over the size limit): the operator's only way to
 * tell those apart, since the client sees the same 403.
 */
export function unavailable(mode: FailureMode | undefined, cause: string): AuthzDecision {
  return mode === 'FailOpen'
    ? { allowed: true, requestHeaders: { set: [], add: [], remove: [] }, responseHeaders: [], metadata: {}, failedOpen: true, cause }
    : { allowed: false, status: 403, body: '', headers: [], reason: 'unavailable', cause };
}

export function bodyTooLarge(limit: number): AuthzDecision {
  return { allowed: false, status: 413, body: `request body exceeds ${limit} bytes`, headers: [], reason: 'body_too_large' };
}
