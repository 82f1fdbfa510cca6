import type { CelInput } from '../../cel/index.ts';
import type { HeaderMap } from '../http/headers.ts';
import type { DownstreamRequest } from '../http/downstream.ts';
import type { RequestLabels } from '../telemetry/metrics.ts';
import { requestBody } from '../http/downstream.ts';
import {
  BodyTooLargeError,
  type CelCache, type PolicyContext, type RequestIdentity, type ResponseFilter, type ResponseMutation, type TokenUsage, type UpstreamRequestOptions,
} from './context.ts';
import { a2aCelInput } from '../a2a/cel-input.ts';

/** SPEC.md: frontend http.maxBufferSize defaults to 2mb. */
export const DEFAULT_MAX_BUFFER_BYTES = 2 * 1024 * 1024;

async function* oneChunk(body: Buffer): AsyncIterable<Uint8Array> {
  yield body;
}

const NO_BODY = new Uint8Array(0);

/**
 * What a context needs of the request's routing (before routing: the listener and the raw request);
 * the pipeline's forward (pipeline/resolve.ts) is one.
 */
export interface RoutedRequest {
  readonly clientPath: string;
  readonly query: string;
  readonly host: string;
  readonly headers: HeaderMap;
  readonly labels: RequestLabels;
  /** The chosen backend, when known: A2A backends (a2aCardPaths set) give CEL its `a2a` variable from the body. */
  readonly backend?: { readonly a2aCardPaths?: ReadonlySet<string> };
}

/** The PolicyContext of one proxied request; also carries what the Exchange needs afterwards. */
export class RequestPolicyContext implements PolicyContext {
  readonly method: string;
  // Route-dependent fields change once when a PreRouting context continues after routing (routed()).
  path: string;
  query: string;
  host: string;
  readonly scheme: 'http' | 'https';
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly connection: object;
  readonly downstreamHeaders: DownstreamRequest['headers'];
  upstreamHeaders: HeaderMap;
  readonly identity: RequestIdentity = {};
  readonly responseMutations: ResponseMutation[] = [];
  readonly responseFilters: ResponseFilter[] = [];
  readonly upstream: UpstreamRequestOptions = { delayedMs: 0 };
  names: PolicyContext['names'];
  readonly startTime = Date.now();
  celCache: CelCache | undefined = undefined;
  readonly #req: DownstreamRequest;
  readonly #maxBufferBytes: number;
  #body: Buffer | undefined;
  #reading: Promise<Buffer> | undefined;
  #usageListeners: ((usage: TokenUsage) => void)[] | undefined;
  #endListeners: (() => void)[] | undefined;
  #ended = false;
  /** A request to an A2A backend: cel() reads `a2a.*` from the buffered body. */
  #a2a: boolean;

  constructor(req: DownstreamRequest, fwd: RoutedRequest, scheme: 'http' | 'https', maxBufferBytes = DEFAULT_MAX_BUFFER_BYTES) {
    this.#req = req;
    this.#maxBufferBytes = maxBufferBytes;
    this.#a2a = fwd.backend?.a2aCardPaths !== undefined;
    this.method = req.method ?? 'GET';
    this.path = fwd.clientPath;
    this.query = fwd.query;
    this.host = fwd.host;
    this.scheme = scheme;
    this.remoteAddress = req.socket.remoteAddress;
    this.remotePort = req.socket.remotePort;
    // HTTP/2's compat request hands out a proxy per request; the session is the connection.
    this.connection = 'stream' in req ? req.stream.session ?? req.socket : req.socket;
    this.downstreamHeaders = req.headers;
    this.upstreamHeaders = fwd.headers;
    this.names = { gateway: fwd.labels.gateway, listener: fwd.labels.listener, route: fwd.labels.route, backend: fwd.labels.backend };
  }

  /**
   * After PreRouting steps ran on this context, the chosen route's view of the request: its path,
   * host and upstream headers (built from the headers as PreRouting left them). Identity, buffered
   * body and response mutations stay, so PostRouting steps and the response see them.
   */
  routed(fwd: RoutedRequest): void {
    this.path = fwd.clientPath;
    this.query = fwd.query;
    this.host = fwd.host;
    this.upstreamHeaders = fwd.headers;
    this.names = { gateway: fwd.labels.gateway, listener: fwd.labels.listener, route: fwd.labels.route, backend: fwd.labels.backend };
    this.#a2a = fwd.backend?.a2aCardPaths !== undefined;
    this.celCache = undefined;
  }

  /** The buffered (or replaced) body, once a step read it; undefined means stream the original. */
  get bufferedBody(): Buffer | undefined {
    return this.#body;
  }

  readBody(): Promise<Buffer> {
    // A processed stream set after an earlier read replaces that body: buffer the stream instead.
    if (this.upstream.bodyStream) this.#reading = undefined;
    else if (this.#body) return Promise.resolve(this.#body);
    this.#reading ??= this.#read();
    return this.#reading;
  }

  replaceBody(body: Buffer): void {
    this.#body = body;
    delete this.upstreamHeaders['transfer-encoding'];
    this.upstreamHeaders['content-length'] = String(body.length);
  }

  requestBodyStream(): AsyncIterable<Uint8Array> | null {
    if (this.upstream.bodyStream) return this.upstream.bodyStream;
    if (this.#body) return this.#body.length === 0 ? null : oneChunk(this.#body);
    return requestBody(this.#req);
  }

  requestTrailers(): Readonly<Record<string, string | string[] | undefined>> | undefined {
    return this.#req.trailers;
  }

  onEnd(listener: () => void): void {
    if (this.#ended) return listener();
    (this.#endListeners ??= []).push(listener);
  }

  /** Called once the request is over (handle-request wraps `done`); later calls do nothing. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const listener of this.#endListeners ?? []) {
      try {
        listener();
      } catch {
        // Cleanup after the response: a failing listener must not stop the others.
      }
    }
  }

  async #read(): Promise<Buffer> {
    // A processed stream (ext_proc) is what the upstream would get: buffer that, never the raw body.
    const processed = this.upstream.bodyStream;
    this.upstream.bodyStream = undefined;
    const stream = processed ?? requestBody(this.#req);
    if (!stream) {
      this.#body = Buffer.alloc(0);
      return this.#body;
    }
    const declared = Number(this.downstreamHeaders['content-length']);
    if (!processed && Number.isFinite(declared) && declared > this.#maxBufferBytes) throw new BodyTooLargeError(this.#maxBufferBytes, 'request body');
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > this.#maxBufferBytes) throw new BodyTooLargeError(this.#maxBufferBytes, 'request body');
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks, size);
    this.replaceBody(body);
    return body;
  }

  cel(): CelInput {
    const id = this.identity;
    const target = this.query === '' ? this.path : `${this.path}?${this.query}`;
    return {
      request: {
        method: this.method,
        url: target,
        host: this.host,
        scheme: this.scheme,
        version: this.#req.httpVersion === '2.0' ? 'HTTP/2' : `HTTP/${this.#req.httpVersion}`,
        headers: this.downstreamHeaders,
        // CEL reads the body synchronously: steps that need it call readBody() first, and the
        // activation is rebuilt when the buffered body changes (policies/cel.ts), so pass it as is.
        body: this.#body ?? NO_BODY,
        startTime: this.startTime,
      },
      source: { address: this.remoteAddress ?? '', port: this.remotePort ?? 0 },
      // Absent identities stay undefined: createActivation turns them into empty maps.
      jwt: id.jwt?.claims,
      apiKey: id.apiKey,
      basicAuth: id.basicAuth,
      extauthz: id.extauthz,
      extproc: id.extproc,
      route: { name: this.names.route },
      gateway: { name: this.names.gateway },
      backend: { name: this.names.backend },
      // Parsed only for A2A backends, once per body (the activation is cached per body).
      a2a: this.#a2a && this.#body ? a2aCelInput(this.#body) : undefined,
    };
  }

  onUsage(listener: (usage: TokenUsage) => void): void {
    (this.#usageListeners ??= []).push(listener);
  }

  /** Called by the LLM handler once usage is known; a failing listener never breaks the others. */
  reportUsage(usage: TokenUsage): void {
    for (const listener of this.#usageListeners ?? []) {
      try {
        listener(usage);
      } catch {
        // Usage accounting happens after the response; nothing is left to fail.
      }
    }
  }
}
