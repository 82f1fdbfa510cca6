import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { CelInput } from '../../cel/index.ts';
import type { HeaderMap } from '../http/headers.ts';

/** Identities established by authentication steps, visible to later steps and to CEL. */
export interface RequestIdentity {
  jwt?: { readonly claims: Record<string, unknown>; readonly token: string };
  apiKey?: { readonly name: string; readonly metadata?: unknown };
  basicAuth?: { readonly user: string };
  /** The client credential a backend `auth.passthrough` re-sends upstream. */
  passthroughToken?: string;
}

/** A change to the response headers, run when the upstream (or a policy) answers. */
export type ResponseMutation = (headers: HeaderMap, status: number) => void;

/**
 * Everything a traffic policy step sees of one request, and the few things it may change:
 * the upstream headers, the identity, response mutations and (once buffered) the body.
 * One instance per request; steps run in a fixed order (see chain.ts).
 */
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
  readonly downstreamHeaders: IncomingHttpHeaders;
  /** What goes upstream; steps may set, add or remove. */
  readonly upstreamHeaders: HeaderMap;
  readonly identity: RequestIdentity;
  readonly responseMutations: ResponseMutation[];
  readonly names: { readonly gateway: string; readonly listener: string; readonly route: string; readonly backend: string };
  readonly startTime: number;
  /**
   * Buffers the request body once (up to the frontend's maxBufferSize) and from then on the
   * upstream receives the buffered copy. Rejects with BodyTooLargeError past the limit.
   */
  readBody(): Promise<Buffer>;
  /** Replace the body sent upstream (transformations, ext_proc). */
  replaceBody(body: Buffer): void;
  /** The CEL input for this request as it stands now (identity included); rebuilt after changes. */
  cel(): CelInput;
}

export class BodyTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`request body exceeds the buffer limit of ${limit} bytes`);
    this.limit = limit;
  }
}

export interface BodySource {
  /** The downstream stream, or null when the request has no body. */
  readonly stream: Readable | null;
  readonly maxBytes: number;
}
