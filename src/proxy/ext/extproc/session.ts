/**
 * Envoy ext_proc (`envoy.service.ext_proc.v3.ExternalProcessor/Process`): one bidirectional
 * stream per request, driven by the pipeline phase by phase:
 *
 *   const s = client.session(activation)
 *   const h = await s.requestHeaders(headers, endOfStream)   // continue (mutated headers) | respond
 *   upstreamBody = s.requestBody(downstreamBody, () => requestTrailers)   // async iterable in → out
 *   const r = await s.responseHeaders(status, headers, endOfStream)
 *   downstreamBody = s.responseBody(upstreamBody, () => responseTrailers)
 *   s.close()
 *
 * Trailers: when the body ends and the message has trailers (the callback returns a non-empty
 * map) and the trailer mode is Send, the last body message does not claim end_of_stream, an
 * HttpTrailers message follows, and the processor's header mutation is applied to the trailers
 * object in place. Attributes travel in the first message of each phase (normally its headers):
 * `requestAttributes` see the request, `responseAttributes` also `response.code` and
 * `response.headers`.
 *
 * A body iterable throws ExtProcImmediateResponse when the processor answers instead, and
 * ExtProcError when the processor fails or a Buffered body is over the limit. FailOpen applies
 * only until the request body starts streaming; after that every failure is an error.
 * FullDuplexStreamed uses the STREAMED wire mode of the installed Envoy API: each chunk is sent and
 * its BodyResponse (optionally replacing that chunk) awaited before the next.
 */
import { create, type JsonObject as ProtoJsonObject } from '@bufbuild/protobuf';
import { createClient, type Client } from '@connectrpc/connect';
import { createActivation, type Activation, type Program } from '../../../cel/index.ts';
import type { JsonObject } from '../../../ir/policy.ts';
import { MetadataSchema } from '../gen/envoy/config/core/v3/base_pb.js';
import {
  ExternalProcessor, ProcessingRequestSchema,
  type BodyMutation, type CommonResponse, type ImmediateResponse, type ProcessingRequest, type ProcessingResponse,
} from '../gen/envoy/service/ext_proc/v3/external_processor_pb.js';
import type { SharedConnections } from '../connections.ts';
import { grpcChannel, withUrlFallback, type EndpointResolver, type GrpcChannel } from '../endpoint.ts';
import { compileMap, evalValues } from '../expressions.ts';
import { applyMutations, fromHeaderOptions, headerPairs, headerValueText, toHeaderMap, type HeaderPair, type RequestHeaders } from '../headers.ts';
import { MessageQueue } from './queue.ts';
import { applyOverride, initialModes, type BodySendMode, type ExtProcConfig, type Modes } from './config.ts';

/** Attributes travel under the filter's name, as Envoy sends them. */
const ATTRIBUTES_NAMESPACE = 'envoy.filters.http.ext_proc';
export const DEFAULT_BUFFER_LIMIT = 2 * 1024 * 1024;

export interface ImmediateAnswer {
  readonly status: number;
  readonly headers: readonly HeaderPair[];
  readonly body: Uint8Array;
}

export type HeadersOutcome =
  | { readonly kind: 'continue'; readonly headers: Record<string, string | string[]> }
  | { readonly kind: 'respond'; readonly response: ImmediateAnswer };

export class ExtProcImmediateResponse extends Error {
  readonly response: ImmediateAnswer;
  constructor(response: ImmediateAnswer) {
    super(`external processor answered ${response.status}`);
    this.response = response;
  }
}

export class ExtProcError extends Error {
  /** 413 for a request body over the buffer limit, 502 for a response body, 500 otherwise. */
  readonly status: number;
  constructor(message: string, status = 500) {
    super(message);
    this.status = status;
  }
}

export interface ExtProcOptions {
  readonly resolve?: EndpointResolver;
  /** The runtime's shared connections: a client for an endpoint in use reuses its channel. */
  readonly connections?: SharedConnections;
  /** Largest body buffered for Buffered / BufferedPartial (default 2 MiB, frontend maxBufferSize). */
  readonly bufferLimit?: number;
  /** Deadline for each answer of the processor (default 5000 ms). */
  readonly messageTimeoutMs?: number;
}

export class ExtProcClient {
  readonly config: ExtProcConfig;
  readonly options: ExtProcOptions;
  readonly channel: GrpcChannel;
  readonly client: Client<typeof ExternalProcessor>;
  readonly metadataContext: ReadonlyMap<string, ReadonlyMap<string, Program>>;
  readonly requestAttributes: ReadonlyMap<string, Program>;
  readonly responseAttributes: ReadonlyMap<string, Program>;

  constructor(config: ExtProcConfig, options: ExtProcOptions = {}) {
    this.config = config;
    this.options = options;
    // Expressions first: a compile error must not leave a channel behind.
    this.metadataContext = new Map(Object.entries(config.metadataContext ?? {}).map(([ns, m]) => [ns, compileMap(m, `extProc.metadataContext.${ns}`)]));
    this.requestAttributes = compileMap(config.requestAttributes, 'extProc.requestAttributes');
    this.responseAttributes = compileMap(config.responseAttributes, 'extProc.responseAttributes');
    this.channel = grpcChannel(withUrlFallback(options.resolve)(config), options.connections);
    this.client = createClient(ExternalProcessor, this.channel.transport);
  }

  session(activation: Activation): ExtProcSession {
    return new ExtProcSession(this, activation);
  }

  close(): void {
    this.channel.close();
  }
}

type Phase = 'request' | 'response';
/** A message's trailers, as the pipeline holds them (changed in place). */
export type Trailers = Record<string, string | string[] | undefined>;

export class ExtProcSession {
  readonly #owner: ExtProcClient;
  readonly #activation: Activation;
  readonly #modes: Modes;
  readonly #abort = new AbortController();
  #outgoing: MessageQueue<ProcessingRequest> | undefined;
  #incoming: AsyncIterator<ProcessingResponse> | undefined;
  /** FailOpen turned the processor off for this request. */
  #bypassed = false;
  #bodyStarted = false;
  #sentFirst = false;
  /** Whether the first message of each phase (which carries its attributes) has gone out. */
  readonly #attributesSent = { request: false, response: false };
  /** The request's activation with the upstream response added, for `responseAttributes`. */
  #responseActivation: Activation | undefined;
  /** Dynamic metadata from the processor: the `extproc` CEL variable. */
  readonly metadata: Record<string, unknown> = {};

  constructor(owner: ExtProcClient, activation: Activation) {
    this.#owner = owner;
    this.#activation = activation;
    this.#modes = initialModes(owner.config);
  }

  async requestHeaders(headers: RequestHeaders, endOfStream: boolean): Promise<HeadersOutcome> {
    return this.#headers('request', headers, endOfStream);
  }

  async responseHeaders(status: number, headers: RequestHeaders, endOfStream: boolean): Promise<HeadersOutcome> {
    if (this.#owner.responseAttributes.size > 0) {
      const response = createActivation({ response: { code: status, headers } }).response;
      this.#responseActivation = { ...this.#activation, response } as Activation;
    }
    return this.#headers('response', { ...headers, ':status': String(status) }, endOfStream);
  }

  /** `trailers` is read when the body has ended: the message's trailers, changed in place by the processor. */
  requestBody(body: AsyncIterable<Uint8Array>, trailers?: () => Trailers | undefined): AsyncIterable<Uint8Array> {
    return this.#body('request', body, trailers);
  }

  responseBody(body: AsyncIterable<Uint8Array>, trailers?: () => Trailers | undefined): AsyncIterable<Uint8Array> {
    return this.#body('response', body, trailers);
  }

  /** Ends the stream (half-close, then cancel whatever is left). */
  close(): void {
    this.#outgoing?.end();
    this.#abort.abort();
  }

  async #headers(phase: Phase, headers: RequestHeaders, endOfStream: boolean): Promise<HeadersOutcome> {
    const mode = phase === 'request' ? this.#modes.requestHeaders : this.#modes.responseHeaders;
    if (this.#bypassed || mode === 'Skip') return { kind: 'continue', headers: applyMutations(headers, { set: [], add: [], remove: [] }) };
    const pairs = headerPairs(headers);
    const message = create(ProcessingRequestSchema, {
      request: { case: phase === 'request' ? 'requestHeaders' : 'responseHeaders', value: { headers: toHeaderMap(pairs), endOfStream } },
      attributes: this.#attributes(phase),
      ...(this.#sentFirst ? {} : { metadataContext: create(MetadataSchema, { filterMetadata: this.#metadataContext() }) }),
    });
    let response: ProcessingResponse;
    try {
      response = await this.#exchange(message);
    } catch (err) {
      if (this.#canFailOpen()) {
        this.#bypassed = true;
        return { kind: 'continue', headers: applyMutations(headers, { set: [], add: [], remove: [] }) };
      }
      throw asError(err);
    }
    if (response.response.case === 'immediateResponse') return { kind: 'respond', response: immediate(response.response.value) };
    if (response.modeOverride && this.#owner.config.processingOptions?.allowModeOverride) applyOverride(this.#modes, response.modeOverride);
    const common = response.response.case === 'requestHeaders' || response.response.case === 'responseHeaders' ? response.response.value.response : undefined;
    const mutations = fromHeaderOptions(common?.headerMutation?.setHeaders ?? [], common?.headerMutation?.removeHeaders ?? []);
    const out = applyMutations(headers, mutations);
    delete out[':status'];
    return { kind: 'continue', headers: out };
  }

  async *#body(phase: Phase, body: AsyncIterable<Uint8Array>, trailersOf: (() => Trailers | undefined) | undefined): AsyncIterable<Uint8Array> {
    const mode: BodySendMode = phase === 'request' ? this.#modes.requestBody : this.#modes.responseBody;
    if (this.#bypassed || mode === 'None') {
      yield* body;
      await this.#trailers(phase, trailersOf);
      return;
    }
    if (phase === 'request') this.#bodyStarted = true;
    const limit = this.#owner.options.bufferLimit ?? DEFAULT_BUFFER_LIMIT;
    if (mode === 'FullDuplexStreamed') {
      for await (const chunk of body) yield await this.#sendBody(phase, chunk, false);
      // With trailers to send, the trailers message ends the stream instead of an empty last chunk.
      if (this.#trailersToSend(phase, trailersOf) === undefined) {
        const last = await this.#sendBody(phase, new Uint8Array(0), true);
        if (last.length > 0) yield last;
      }
      await this.#trailers(phase, trailersOf);
      return;
    }
    const iterator = body[Symbol.asyncIterator]();
    const buffered: Uint8Array[] = [];
    let size = 0;
    let done = false;
    while (size <= limit) {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        break;
      }
      buffered.push(next.value);
      size += next.value.length;
    }
    if (!done && mode === 'Buffered') throw new ExtProcError(`${phase} body exceeds the buffer limit of ${limit} bytes`, phase === 'request' ? 413 : 502);
    const whole = Buffer.concat(buffered);
    // BufferedPartial sends at most `limit` bytes; what follows passes through unprocessed.
    const prefix = done ? whole : whole.subarray(0, limit);
    yield await this.#sendBody(phase, prefix, done && this.#trailersToSend(phase, trailersOf) === undefined);
    if (!done) {
      if (whole.length > limit) yield whole.subarray(limit);
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    }
    await this.#trailers(phase, trailersOf);
  }

  /** The trailers to send once the body has ended: present, non-empty, and the mode says Send. */
  #trailersToSend(phase: Phase, trailersOf: (() => Trailers | undefined) | undefined): Trailers | undefined {
    if (this.#bypassed || !trailersOf) return undefined;
    if ((phase === 'request' ? this.#modes.requestTrailers : this.#modes.responseTrailers) !== 'Send') return undefined;
    const trailers = trailersOf();
    if (!trailers) return undefined;
    for (const _ in trailers) return trailers;
    return undefined;
  }

  /** Sends the trailers (HttpTrailers) and applies the processor's mutation to them in place. */
  async #trailers(phase: Phase, trailersOf: (() => Trailers | undefined) | undefined): Promise<void> {
    const trailers = this.#trailersToSend(phase, trailersOf);
    if (!trailers) return;
    const message = create(ProcessingRequestSchema, {
      request: { case: phase === 'request' ? 'requestTrailers' : 'responseTrailers', value: { trailers: toHeaderMap(headerPairs(trailers)) } },
      attributes: this.#attributes(phase),
    });
    const response = await this.#exchangeOrThrow(message);
    // The headers (and body) are gone: an answer now can only end the response, as a failure.
    if (response.response.case === 'immediateResponse') throw new ExtProcError('external processor answered after the body had been sent');
    if (response.modeOverride && this.#owner.config.processingOptions?.allowModeOverride) applyOverride(this.#modes, response.modeOverride);
    const mutation = response.response.case === 'requestTrailers' || response.response.case === 'responseTrailers' ? response.response.value.headerMutation : undefined;
    if (!mutation) return;
    const out = applyMutations(trailers, fromHeaderOptions(mutation.setHeaders, mutation.removeHeaders));
    for (const name of Object.keys(trailers)) if (!(name in out)) delete trailers[name];
    Object.assign(trailers, out);
  }

  /** Sends one body message and returns the body to forward (the processor may replace or clear it). */
  async #sendBody(phase: Phase, chunk: Uint8Array, endOfStream: boolean): Promise<Uint8Array> {
    const message = create(ProcessingRequestSchema, {
      request: { case: phase === 'request' ? 'requestBody' : 'responseBody', value: { body: chunk, endOfStream } },
      attributes: this.#attributes(phase),
    });
    const response = await this.#exchangeOrThrow(message);
    if (response.response.case === 'immediateResponse') throw new ExtProcImmediateResponse(immediate(response.response.value));
    const common: CommonResponse | undefined = response.response.case === 'requestBody' || response.response.case === 'responseBody' ? response.response.value.response : undefined;
    return mutatedBody(chunk, common?.bodyMutation);
  }

  #canFailOpen(): boolean {
    return this.#owner.config.failureMode === 'FailOpen' && !this.#bodyStarted;
  }

  /** One message and its answer; a failure surfaces as an ExtProc error (no fail-open once the body started). */
  async #exchangeOrThrow(message: ProcessingRequest): Promise<ProcessingResponse> {
    try {
      return await this.#exchange(message);
    } catch (err) {
      throw asError(err);
    }
  }

  async #exchange(message: ProcessingRequest): Promise<ProcessingResponse> {
    if (!this.#outgoing || !this.#incoming) {
      this.#outgoing = new MessageQueue<ProcessingRequest>();
      this.#incoming = this.#owner.client.process(this.#outgoing, { signal: this.#abort.signal })[Symbol.asyncIterator]();
    }
    this.#sentFirst = true;
    this.#outgoing.push(message);
    const timeoutMs = this.#owner.options.messageTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ExtProcError(`external processor did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const next = await Promise.race([this.#incoming.next(), timeout]);
      if (next.done) throw new ExtProcError('external processor closed the stream');
      if (next.value.dynamicMetadata) Object.assign(this.metadata, next.value.dynamicMetadata);
      return next.value;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The phase's attributes for its first message; later messages of the phase carry none. */
  #attributes(phase: Phase): { [key: string]: ProtoJsonObject } {
    if (this.#attributesSent[phase]) return {};
    this.#attributesSent[phase] = true;
    const programs = phase === 'request' ? this.#owner.requestAttributes : this.#owner.responseAttributes;
    if (programs.size === 0) return {};
    const activation = phase === 'response' ? this.#responseActivation ?? this.#activation : this.#activation;
    return { [ATTRIBUTES_NAMESPACE]: evalValues(programs, activation) as ProtoJsonObject };
  }

  #metadataContext(): { [namespace: string]: ProtoJsonObject } {
    const out: { [namespace: string]: ProtoJsonObject } = {};
    for (const [ns, programs] of this.#owner.metadataContext) out[ns] = evalValues(programs, this.#activation) as ProtoJsonObject;
    return out;
  }

  /** The processor's dynamic metadata, for the `extproc` CEL variable. */
  get extproc(): JsonObject {
    return this.metadata as JsonObject;
  }
}

function asError(err: unknown): ExtProcError {
  return err instanceof ExtProcError ? err : new ExtProcError(`external processor failed: ${(err as Error).message}`);
}

function mutatedBody(original: Uint8Array, mutation: BodyMutation | undefined): Uint8Array {
  if (mutation?.mutation.case === 'body') return mutation.mutation.value;
  if (mutation?.mutation.case === 'clearBody' && mutation.mutation.value) return new Uint8Array(0);
  return original;
}

function immediate(r: ImmediateResponse): ImmediateAnswer {
  const code = r.status?.code ?? 0;
  const headers = (r.headers?.setHeaders ?? []).flatMap((o): HeaderPair[] => (o.header ? [[o.header.key.toLowerCase(), headerValueText(o.header)]] : []));
  return { status: code >= 200 && code <= 599 ? code : 200, headers, body: r.body };
}
