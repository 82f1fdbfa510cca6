import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { CelInput } from '../../cel/index.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { DirectResponse } from './result.ts';
import type { ResponseMutation } from '../http/downstream.ts';

/** Identities established by authentication steps, visible to later steps and to CEL. */
export interface RequestIdentity {
  jwt?: { readonly claims: Record<string, unknown>; readonly token: string };
  apiKey?: { readonly name: string; readonly metadata?: unknown };
  basicAuth?: { readonly user: string };
  /** The client credential a backend `auth.passthrough` re-sends upstream. */
  passthroughToken?: string;
  /** Request headers (lowercase) a client-auth policy read a credential from: kept from upstreams that get their own credential. */
  credentialHeaders?: readonly string[];
  /** Metadata from external authorization: the `extauthz` CEL variable. */
  extauthz?: Readonly<Record<string, unknown>>;
  /** Dynamic metadata from external processing: the `extproc` CEL variable. */
  extproc?: Readonly<Record<string, unknown>>;
}

/** Token counts of a completed LLM request, reported by the LLM handler after the response. */
export interface TokenUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly totalTokens: number;
}

/** The upstream response as response filters see it; `headers` may be changed in place. */
export interface FilteredResponse {
  status: number;
  readonly headers: HeaderMap;
  /** The upstream's trailers, set once its body has ended (before body filters see their input end); changed in place. */
  trailers?: HeaderMap;
}

/**
 * Response-phase processing that may be asynchronous or rewrite the body (transformation
 * `response.body`, ext_proc). Only requests whose policies registered one pay for it: the
 * Exchange buffers nothing otherwise.
 */
export interface ResponseFilter {
  /** Before the headers go out; may change them (and the status) or answer instead. */
  headers?(response: FilteredResponse): DirectResponse | undefined | Promise<DirectResponse | undefined>;
  /** The body, as a stream in and a stream out; throwing ends the response with an error. */
  body?(body: AsyncIterable<Uint8Array>, response: FilteredResponse): AsyncIterable<Uint8Array>;
  /**
   * The same processing on one framed message of a streamed answer (an MCP SSE event's JSON-RPC
   * message), for a filter that can work message by message; throwing fails that message. A
   * handler that frames its answer as messages applies it there instead of `body` (docs/mcp.md).
   */
  message?(message: Uint8Array, response: FilteredResponse): Uint8Array;
}

/** HTTPRouteRetry semantics, compiled. */
export interface RetryPolicy {
  /** Response statuses that are retried (connect failures always are). */
  readonly codes: ReadonlySet<number>;
  /** Retries after the first attempt. */
  readonly attempts: number;
  readonly backoffMs: number;
}

/** What traffic steps ask of the upstream exchange itself. */
export interface UpstreamRequestOptions {
  /** traffic.hostRewrite: Auto sets Host to the destination, None keeps the client's. */
  hostRewrite?: 'Auto' | 'None';
  retry?: RetryPolicy;
  /** Time already spent by fault-injection delays: it counts against the request timeout. */
  delayedMs: number;
  /** A processed request body streamed upstream instead of the client's (ext_proc streaming). */
  bodyStream?: AsyncIterable<Uint8Array>;
  /** Set by a body processor that answered (or failed) mid-stream: sent instead of a 502. */
  answer?: DirectResponse;
}

/** A change to the response headers, run when the upstream (or a policy) answers (declared in http/downstream.ts). */
export type { ResponseMutation };

/**
 * Everything a traffic policy step sees of one request, and the few things it may change:
 * the upstream headers, the identity, response mutations and (once buffered) the body.
 * One instance per request; steps run in a fixed order (see chain.ts).
 */
/** What activationOf keeps per request; opaque to everything else. */
export interface CelCache {
  readonly activation: unknown;
  readonly jwt: unknown;
  readonly apiKey: unknown;
  readonly basicAuth: unknown;
  readonly extauthz: unknown;
  readonly extproc: unknown;
  readonly body: unknown;
}

export interface PolicyContext {
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  /** Raw query string without `?` ('' when none). */
  readonly query: string;
  /** Host without port, lowercased. */
  readonly host: string;
  readonly scheme: 'http' | 'https';
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  /** The client connection as an opaque identity, for per-connection caches (undefined: none). */
  readonly connection?: object;
  readonly downstreamHeaders: IncomingHttpHeaders;
  /** What goes upstream; steps may set, add or remove. */
  readonly upstreamHeaders: HeaderMap;
  readonly identity: RequestIdentity;
  readonly responseMutations: ResponseMutation[];
  /** Asynchronous or body-rewriting response processing, in registration order. */
  readonly responseFilters: ResponseFilter[];
  readonly upstream: UpstreamRequestOptions;
  readonly names: { readonly gateway: string; readonly listener: string; readonly route: string; readonly backend: string };
  readonly startTime: number;
  /**
   * Buffers the request body once (up to the frontend's maxBufferSize) and from then on the
   * upstream receives the buffered copy. Rejects with BodyTooLargeError past the limit.
   */
  readBody(): Promise<Buffer>;
  /** Replace the body sent upstream (transformations, ext_proc). */
  replaceBody(body: Buffer): void;
  /**
   * The request body as it stands, for steps that process it as a stream (ext_proc): a processed
   * `upstream.bodyStream`, else the buffered copy once a step read it, else the client's stream;
   * null when there is none. Consuming it is final: the step hands the upstream its replacement
   * as `upstream.bodyStream` (readBody() then buffers that, not the client's body).
   */
  requestBodyStream(): AsyncIterable<Uint8Array> | null;
  /**
   * Runs `listener` once when the request is over, however it ended (answered by a policy,
   * forwarded and finished, failed, client gone): sessions with external services close here.
   */
  onEnd(listener: () => void): void;
  /** The client's request trailers once its body has been read (ext_proc); absent or empty: none. */
  requestTrailers?(): Readonly<Record<string, string | string[] | undefined>> | undefined;
  /** The CEL input for this request as it stands now (identity included); rebuilt after changes. */
  cel(): CelInput;
  /** Owned by policies/cel.ts: the request's activation, shared by steps until the identity changes. */
  celCache?: CelCache;
  /** Runs `listener` once the request's token usage is known (LLM responses only). */
  onUsage(listener: (usage: TokenUsage) => void): void;
}

export { BodyTooLargeError } from '../http/body.ts';

export interface BodySource {
  /** The downstream stream, or null when the request has no body. */
  readonly stream: Readable | null;
  readonly maxBytes: number;
}
