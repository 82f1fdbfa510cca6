/**
 * OpenTelemetry GenAI semantic conventions (gen-ai spans, semconv 1.37+: `gen_ai.provider.name`
 * replaces `gen_ai.system`) on LLM requests: each provider attempt is a CLIENT span named
 * `{gen_ai.operation.name} {gen_ai.request.model}` under the request span, and the request span
 * gets the same facts of the attempt that answered. Facts the answer carries (response model and
 * id, finish reasons) are read from the client-format body or stream chunks, only when traced.
 */
import type { Attributes, Span } from '@opentelemetry/api';
import type { LLMProvider, RouteType } from '../../../ir/ai.ts';
import { currentScope, type RequestFacts } from '../request-facts.ts';
import { endCall, inject, type RequestTrace } from './request-trace.ts';

/** Token counts as the LLM translators report them (llm/translate/usage.ts; input includes cached reads). */
export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cachedInputTokens?: number;
  readonly cacheWriteTokens?: number;
  readonly reasoningTokens?: number;
}

/** `gen_ai.operation.name`: the semconv values where one fits, the route type in snake case otherwise. */
export const OPERATIONS: Readonly<Record<RouteType, string>> = {
  Completions: 'chat', Messages: 'chat', Responses: 'chat', Realtime: 'chat', Embeddings: 'embeddings',
  Models: 'models', TokenCount: 'count_tokens', Rerank: 'rerank', Passthrough: 'passthrough',
};

/** `gen_ai.provider.name` well-known values. */
export function providerName(provider: LLMProvider): string {
  if ('providerA' in provider) return 'openai';
  if ('providerB' in provider) return 'azure.ai.openai';
  if ('providerC' in provider) return 'azure.ai.inference';
  if ('providerD' in provider) return 'anthropic';
  if ('providerE' in provider) return 'gcp.gemini';
  if ('providerF' in provider) return 'gcp.vertex_ai';
  if ('providerG' in provider) return 'aws.bedrock';
  return 'custom';
}

/** Reads model, id and finish reasons out of client-format answers (OpenAI chat/responses, Anthropic messages). */
const MODEL = /"model"\s*:\s*"([^"\\]{1,256})"/;
const ID = /"id"\s*:\s*"([^"\\]{1,256})"/;
const FINISH = /"(?:finish_reason|stop_reason)"\s*:\s*"([^"\\]{1,64})"/g;
/** A partial stream line longer than this is not read (a huge content delta says nothing we look for). */
const MAX_CARRY = 64 * 1024;
/** A stream's finish reasons are collected up to this many (one per choice). */
const MAX_FINISH_REASONS = 16;

/**
 * One provider attempt of a traced LLM request. Created before the attempt is planned; the plan's
 * model and the upstream request's headers come in `request`, the answer in `body`/`chunk`/`usage`.
 */
export class LlmAttemptSpan {
  /** Undefined when the request is not traced but its facts are read (an access log's CEL): no spans then. */
  readonly #trace: RequestTrace | undefined;
  readonly #facts: RequestFacts;
  readonly #span: Span | undefined;
  readonly #operation: string;
  readonly #started = performance.now();
  #firstChunkSeconds: number | undefined;
  #responseModel: string | undefined;
  #responseId: string | undefined;
  #finishReasons: string[] = [];
  /** A stream's partial last line, until its end arrives. */
  #carry = '';
  #ended = false;
  /** Set while a span that outlives its request holds the tracer provider (outlivesRequest). */
  #release: (() => void) | undefined;

  constructor(requestTrace: RequestTrace | undefined, facts: RequestFacts, provider: { readonly name: string; readonly provider: LLMProvider }, route: RouteType) {
    this.#trace = requestTrace;
    this.#facts = facts;
    this.#operation = OPERATIONS[route];
    const attributes: Attributes = {
      'gen_ai.operation.name': this.#operation,
      'gen_ai.provider.name': providerName(provider.provider),
      'switchboard.llm.provider': provider.name,
      'switchboard.llm.route': route,
    };
    this.#span = requestTrace?.startCall(this.#operation, attributes);
    requestTrace?.set(attributes);
    facts.noteLlm({ provider: provider.name });
  }

  /** The planned request: model and streaming known; its `traceparent` goes into `headers`. */
  request(model: string, stream: boolean, headers: Record<string, unknown>, address: { host: string; port?: number }): void {
    this.#facts.noteLlm({ requestModel: model, streaming: stream });
    if (this.#span === undefined) return;
    this.#span.updateName(`${this.#operation} ${model}`);
    const attributes: Attributes = { 'gen_ai.request.model': model, 'gen_ai.request.stream': stream };
    this.#span.setAttributes({ ...attributes, 'server.address': address.host, ...(address.port !== undefined ? { 'server.port': address.port } : {}) });
    this.#trace?.set(attributes);
    inject(this.#span, headers);
  }

  /** A buffered answer in the client's format. */
  body(body: Uint8Array): void {
    if (body.length === 0 || body.length > 1 << 20) return;
    this.#scan(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  }

  /**
   * A translated stream chunk on its way to the client (any boundary: events are read line by
   * line, a partial line waits for the next chunk); the first one times the first token.
   */
  chunk(chunk: Uint8Array | string): void {
    this.#firstChunkSeconds ??= (performance.now() - this.#started) / 1000;
    const text = this.#carry + (typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8'));
    const lineEnd = text.lastIndexOf('\n');
    if (lineEnd < 0) {
      this.#carry = text.length > MAX_CARRY ? '' : text;
      return;
    }
    this.#scan(text.slice(0, lineEnd));
    const rest = text.slice(lineEnd + 1);
    this.#carry = rest.length > MAX_CARRY ? '' : rest;
  }

  usage(usage: TokenUsage): void {
    this.#facts.noteLlm({ inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens });
    if (this.#span === undefined) return;
    const attributes: Attributes = {
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
      ...(usage.cachedInputTokens !== undefined ? { 'gen_ai.usage.cache_read.input_tokens': usage.cachedInputTokens } : {}),
      ...(usage.cacheWriteTokens !== undefined ? { 'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens } : {}),
      ...(usage.reasoningTokens !== undefined ? { 'gen_ai.usage.reasoning.output_tokens': usage.reasoningTokens } : {}),
    };
    this.#span.setAttributes(attributes);
    this.#trace?.set(attributes);
  }

  /**
   * The attempt outlives its request (a Realtime session after the 101): its span's exporter is
   * held until `end` (RequestTrace.hold).
   */
  outlivesRequest(): void {
    if (this.#span !== undefined && this.#release === undefined) this.#release = this.#trace?.hold();
  }

  /** The attempt ended with the status the provider answered (or the client saw), or with an error. */
  end(outcome: { status?: number; error?: unknown }): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#carry !== '') this.#scan(this.#carry);
    if (this.#responseModel !== undefined) this.#facts.noteLlm({ responseModel: this.#responseModel });
    if (this.#span === undefined) return;
    const attributes: Attributes = {
      ...(this.#responseModel !== undefined ? { 'gen_ai.response.model': this.#responseModel } : {}),
      ...(this.#responseId !== undefined ? { 'gen_ai.response.id': this.#responseId } : {}),
      ...(this.#finishReasons.length > 0 ? { 'gen_ai.response.finish_reasons': this.#finishReasons } : {}),
      ...(this.#firstChunkSeconds !== undefined ? { 'gen_ai.response.time_to_first_chunk': this.#firstChunkSeconds } : {}),
    };
    this.#span.setAttributes(attributes);
    if (outcome.error === undefined) this.#trace?.set(attributes);
    endCall(this.#span, outcome);
    this.#release?.();
  }

  #scan(text: string): void {
    if (this.#responseModel === undefined) this.#responseModel = MODEL.exec(text)?.[1];
    if (this.#responseId === undefined) this.#responseId = ID.exec(text)?.[1];
    if (!text.includes('_reason')) return;
    for (const m of text.matchAll(FINISH)) {
      if (this.#finishReasons.length >= MAX_FINISH_REASONS) break;
      this.#finishReasons.push(m[1]);
    }
  }
}

/**
 * One provider attempt's span when the request is traced, or its facts recorder when only its
 * facts are read (an access log with CEL); undefined (nothing made) otherwise.
 */
export function llmAttemptSpan(provider: { readonly name: string; readonly provider: LLMProvider }, route: RouteType): LlmAttemptSpan | undefined {
  const scope = currentScope();
  return scope === undefined ? undefined : new LlmAttemptSpan(scope.trace as RequestTrace | undefined, scope.facts, provider, route);
}
