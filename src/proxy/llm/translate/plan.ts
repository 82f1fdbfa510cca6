/**
 * The request-level facade the proxy runtime calls once per LLM request. It never touches a
 * socket: it says where to send what, and hands back the translators for whatever comes back.
 */
import { hasMarkedSignature, nativeMessagesSignatures, nativeResponsesSignatures } from './convert/native-signatures.ts';
import type { Request } from './canonical.ts';
import { codecsFor, countTokensBody, readCountTokensResponse } from './plan-formats.ts';
import { clientEncoder, readClientRequest, readUpstreamResponse, upstreamDecoder, writeClientResponse, writeUpstreamRequest, type ClientFormat } from './codecs.ts';
import { providerToken, type LLMProvider, type PromptCachingConfig, type RouteType } from './config.ts';
import { defaultContext, type TranslationContext } from './context.ts';
import { ToolNameMap } from './convert/tool-names.ts';
import { parseUpstreamError, renderError, TranslationError, type ErrorFormat } from './errors.ts';
import { anthropicModelList, openAIModelList } from './models.ts';
import { PROVIDERS } from './providers/table.ts';
import { conversionPlan } from './providers/conversions.ts';
import type { CredentialHint, ProviderEndpoint, UpstreamFormat } from './providers/types.ts';
import { PassthroughStream, TranslatingStream, type StreamTranslator } from './stream/translator.ts';
import { estimateInputTokens } from './tokencount.ts';
import { jsonTooDeep, MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../../http/json-depth.ts';
import { identityUsage } from './plan-formats.ts';
import type { Usage } from './usage.ts';

export interface PlanInput {
  readonly routeType: RouteType;
  readonly provider: LLMProvider;
  /** The client's raw request body. */
  readonly body: Uint8Array;
  /** The path the client called; Passthrough forwards it unchanged. */
  readonly path?: string;
  readonly method?: string;
  /** `ai.modelAliases`: friendly name → provider model. */
  readonly modelAliases?: Readonly<Record<string, string>>;
  /**
   * `Models` only: every provider of the chosen provider's priority group with its own aliases, in
   * the group's order; the answer is their union (models.ts). Absent: this provider alone.
   */
  readonly modelsGroup?: readonly { readonly provider: LLMProvider; readonly modelAliases?: Readonly<Record<string, string>> }[];
  /** `ai.promptCaching`: Bedrock cache points. */
  readonly promptCaching?: PromptCachingConfig;
  /** Client request headers with lowercase names (the models listing answers Anthropic clients in their shape). */
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** Ids and clock; tests pass a deterministic one. */
  readonly context?: TranslationContext;
}

export interface UpstreamRequest {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly method: string;
  readonly path: string;
  /** Headers the provider needs (content-type, anthropic-version …). Credentials are the runtime's job, placed as `credential` says. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly credential: CredentialHint;
}

export interface ClientResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
  readonly usage?: Usage;
}

export interface ForwardPlan {
  readonly kind: 'forward';
  readonly upstream: UpstreamRequest;
  /** The model sent upstream (after provider override and aliases). */
  readonly model: string;
  readonly stream: boolean;
  readonly clientFormat: string;
  readonly upstreamFormat: UpstreamFormat | 'passthrough';
  /** Buffered upstream answer (any status) → what the client receives. Use it for every non-2xx, streaming or not. */
  translateResponse(status: number, headers: Readonly<Record<string, string | string[] | undefined>>, body: Uint8Array): ClientResponse;
  /** For a 2xx streaming answer: a fresh translator for this response. */
  createStreamTranslator(): StreamTranslator;
  /** Response headers for the client when streaming. */
  readonly streamHeaders: Readonly<Record<string, string>>;
}

export type RequestPlan = ForwardPlan | { readonly kind: 'respond'; readonly response: ClientResponse };

const CLIENT_FORMAT: Partial<Record<RouteType, ClientFormat>> = { Completions: 'chat', Messages: 'messages', Responses: 'responses' };
const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } as const;

/** Decodes without copying the bytes first (Buffer.from(Uint8Array) would). */
function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

function errorFormatFor(route: RouteType, headers: PlanInput['headers']): ErrorFormat {
  if (route === 'Messages' || route === 'TokenCount') return 'anthropic';
  if (route === 'Models' && headers?.['anthropic-version']) return 'anthropic';
  return 'openai';
}

function respondJSON(status: number, value: unknown, usage?: Usage): RequestPlan {
  return { kind: 'respond', response: { status, headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(value)), usage } };
}

/** Plans one request. Never throws for a client mistake: those become a `respond` plan in the client's error format. */
export function planRequest(input: PlanInput): RequestPlan {
  const errorFormat = errorFormatFor(input.routeType, input.headers);
  try {
    return plan(input, errorFormat);
  } catch (e) {
    if (e instanceof TranslationError) return { kind: 'respond', response: renderError({ status: e.status, message: e.message, param: e.param }, errorFormat) };
    throw e;
  }
}

/** What a provider's configuration implies for every request: derived once per config object. */
interface ProviderFacts {
  readonly token: ReturnType<typeof providerToken>;
  readonly mod: (typeof PROVIDERS)[keyof typeof PROVIDERS];
  readonly cfg: unknown;
  readonly pinnedModel: string | undefined;
  readonly target: { host: string; port: number; tls: boolean };
}

const providerFacts = new WeakMap<LLMProvider, ProviderFacts>();

function factsOf(provider: LLMProvider): ProviderFacts {
  let facts = providerFacts.get(provider);
  if (facts === undefined) {
    const token = providerToken(provider);
    const mod = PROVIDERS[token];
    const cfg = mod.config(provider);
    facts = { token, mod, cfg, pinnedModel: (cfg as { model?: string }).model, target: mod.target(provider, cfg as never) };
    providerFacts.set(provider, facts);
  }
  return facts;
}

function plan(input: PlanInput, errorFormat: ErrorFormat): RequestPlan {
  const ctx = input.context ?? defaultContext;
  const facts = factsOf(input.provider);
  const { token, mod, pinnedModel, target } = facts;
  const cfg = facts.cfg as ReturnType<typeof mod.config>;

  if (input.routeType === 'Models') {
    const created = ctx.now();
    const src = input.modelsGroup
      ? input.modelsGroup.map((m) => {
        const f = factsOf(m.provider);
        return { providerModel: f.pinnedModel, aliases: m.modelAliases, ownedBy: f.token, created };
      })
      : { providerModel: pinnedModel, aliases: input.modelAliases, ownedBy: token, created };
    return respondJSON(200, errorFormat === 'anthropic' ? anthropicModelList(src) : openAIModelList(src));
  }
  if (input.routeType === 'Passthrough') return passthroughPlan(input, target, mod.endpoint(input.provider, cfg, { route: 'Completions', model: '', stream: false })?.credential);
  if (input.routeType === 'Realtime') return realtimePlan(input, target, (model) => mod.endpoint(input.provider, cfg, { route: 'Realtime', model, stream: true }), pinnedModel);

  let body: Record<string, unknown>;
  // Before any parse: JSON.stringify and the translators recurse, a deep body would overflow the stack.
  if (jsonTooDeep(input.body)) throw new TranslationError(TOO_DEEP_MESSAGE);
  try {
    const parsed: unknown = JSON.parse(utf8(input.body));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    body = parsed as Record<string, unknown>;
  } catch {
    throw new TranslationError('request body must be a JSON object');
  }
  const requested = typeof body.model === 'string' ? body.model : '';
  const model = pinnedModel ?? input.modelAliases?.[requested] ?? requested;
  if (!model) throw new TranslationError('`model` is required', 400, 'model');
  const stream = body.stream === true;
  const q = { route: input.routeType, model, stream, promptCaching: input.promptCaching };
  const endpoint = mod.endpoint(input.provider, cfg, q);

  if (input.routeType === 'TokenCount' && !endpoint) {
    // No count endpoint upstream: answer locally with an estimate.
    return respondJSON(200, { input_tokens: estimateInputTokens({ ...readClientRequest('messages', { ...body, messages: body.messages ?? [] }), model }) });
  }
  if (!endpoint) throw new TranslationError(`route type ${input.routeType} is not supported by ${token} for model ${model}`, 501);
  if (endpoint.conversion) return conversionPlan(endpoint.conversion, endpoint.format, { ...(endpoint.target ?? target), method: 'POST', path: endpoint.path, headers: { ...JSON_HEADERS, ...endpoint.headers }, credential: endpoint.credential }, body, model, errorFormat, ctx);

  const codecs = codecsFor(input.routeType, endpoint.format);
  // Bedrock streams AWS event-stream frames, everything else SSE.
  const streamAccept = endpoint.format === 'converse' ? 'application/vnd.amazon.eventstream' : 'text/event-stream';
  const upstreamHeaders = { ...JSON_HEADERS, ...endpoint.headers, ...(stream ? { accept: streamAccept } : {}) };
  const upstreamOf = (payload: Uint8Array): UpstreamRequest => ({ ...target, method: 'POST', path: endpoint.path, headers: upstreamHeaders, body: payload, credential: endpoint.credential });
  const finalize = (b: Record<string, unknown>, format: UpstreamFormat) => (mod.finalizeBody ? mod.finalizeBody(cfg, format, b, q) : b);
  const names = new ToolNameMap();

  if (codecs.kind === 'identity') {
    // Same format both ways: forward the client's bytes unless something must change.
    let edited: Record<string, unknown> = { ...body };
    if (model !== requested) edited.model = model;
    if (endpoint.modelInPath) delete edited.model;
    // Signatures a translated route marked (convert/signatures.ts) cannot go to the vendor as they are.
    if (hasMarkedSignature(input.body)) {
      const messages = endpoint.format === 'messages' ? nativeMessagesSignatures(body.messages) : undefined;
      if (messages) edited.messages = messages;
      const items = endpoint.format === 'responses' ? nativeResponsesSignatures(body.input) : undefined;
      if (items) edited.input = items;
    }
    if (endpoint.format === 'chat' && stream && (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage !== true) {
      edited.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    }
    edited = finalize(edited, endpoint.format);
    const unchanged = JSON.stringify(edited) === JSON.stringify(body);
    const fmt = endpoint.format;
    const clientFormat = CLIENT_FORMAT[input.routeType];
    return {
      kind: 'forward',
      upstream: upstreamOf(unchanged ? input.body : Buffer.from(JSON.stringify(edited))),
      model, stream, clientFormat: clientFormat ?? fmt, upstreamFormat: fmt,
      streamHeaders: SSE_HEADERS,
      translateResponse: (status, headers, resBody) => ({
        status,
        headers: { 'content-type': firstHeader(headers['content-type']) ?? 'application/json' },
        body: resBody,
        usage: status < 300 ? identityUsage(fmt, resBody) : undefined,
      }),
      createStreamTranslator: () => {
        if (!clientFormat) throw new Error(`${fmt} does not stream`);
        // The encoder only renders a cut-off stream's error, so a bare request is enough.
        const canonical: Request = { model, system: [], messages: [], stream: true };
        return new PassthroughStream(upstreamDecoder(fmt, names, ctx), clientEncoder(clientFormat, canonical, true, ctx));
      },
    };
  }

  if (codecs.kind === 'count_tokens') {
    const canonical = { ...readClientRequest('messages', { ...body, max_tokens: body.max_tokens ?? 1 }), model };
    const payload = finalize(countTokensBody(endpoint.format, token, canonical, names), endpoint.format);
    return {
      kind: 'forward', upstream: upstreamOf(Buffer.from(JSON.stringify(payload))), model, stream: false,
      clientFormat: 'count_tokens', upstreamFormat: endpoint.format, streamHeaders: SSE_HEADERS,
      translateResponse: (status, headers, resBody) => {
        if (status >= 300) return renderError(parseUpstreamError(status, resBody, headers), errorFormat);
        try {
          return { status, headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(readCountTokensResponse(endpoint.format, resBody))) };
        } catch {
          return renderError({ status: 502, message: 'upstream returned a token count that is not JSON' }, errorFormat);
        }
      },
      createStreamTranslator: () => { throw new Error('token counting does not stream'); },
    };
  }

  // Translated generation request.
  const clientFormat = codecs.client;
  const canonical: Request = { ...readClientRequest(clientFormat, body), model };
  const maxTokensField = token === 'providerA' || token === 'providerB' || token === 'providerC' ? 'max_completion_tokens' : 'max_tokens';
  const written = finalize(writeUpstreamRequest(endpoint.format, canonical, { maxTokensField, toolNames: names }), endpoint.format);
  if (endpoint.modelInPath) delete written.model;
  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  return {
    kind: 'forward',
    upstream: upstreamOf(Buffer.from(JSON.stringify(written))),
    model, stream, clientFormat, upstreamFormat: endpoint.format,
    streamHeaders: SSE_HEADERS,
    translateResponse: (status, headers, resBody) => {
      if (status >= 300) return renderError(parseUpstreamError(status, resBody, headers), errorFormat);
      if (jsonTooDeep(resBody)) return renderError({ status: 502, message: `upstream returned a body nested deeper than ${MAX_JSON_DEPTH} levels` }, errorFormat);
      let res;
      try {
        res = readUpstreamResponse(endpoint.format, JSON.parse(utf8(resBody)), canonical, names, ctx);
      } catch {
        return renderError({ status: 502, message: `upstream returned a body that is not a valid ${endpoint.format} response` }, errorFormat);
      }
      return { status, headers: JSON_HEADERS, body: Buffer.from(JSON.stringify(writeClientResponse(clientFormat, res, canonical, ctx))), usage: res.usage };
    },
    createStreamTranslator: () => new TranslatingStream(upstreamDecoder(endpoint.format, names, ctx), clientEncoder(clientFormat, canonical, includeUsage, ctx)),
  };
}

function passthroughPlan(input: PlanInput, target: { host: string; port: number; tls: boolean }, credential: CredentialHint | undefined): RequestPlan {
  const raw: StreamTranslator = { push: (c) => [c], end: () => [], usage: () => undefined, failed: false };
  return {
    kind: 'forward',
    upstream: { ...target, method: input.method ?? 'POST', path: input.path ?? '/', headers: {}, body: input.body, credential: credential ?? { kind: 'header', name: 'authorization', prefix: 'Bearer ' } },
    model: '', stream: false, clientFormat: 'passthrough', upstreamFormat: 'passthrough', streamHeaders: {},
    translateResponse: (status, headers, body) => ({ status, headers: { 'content-type': firstHeader(headers['content-type']) ?? 'application/octet-stream' }, body }),
    createStreamTranslator: () => raw,
  };
}

/**
 * Realtime is a WebSocket upgrade: nothing to translate, only where to connect. The model travels
 * in the query (`?model=`), with the provider's override or an alias applied; the provider's own
 * query parameters (Azure's `api-version`, `deployment`) win over the client's, whose other
 * parameters are kept.
 */
function realtimePlan(input: PlanInput, target: { host: string; port: number; tls: boolean }, endpointFor: (model: string) => ProviderEndpoint | undefined, pinned: string | undefined): RequestPlan {
  const url = new URL(input.path ?? '/', 'http://client.invalid');
  const requested = url.searchParams.get('model') ?? '';
  const model = pinned ?? input.modelAliases?.[requested] ?? requested;
  const endpoint = endpointFor(model);
  if (!endpoint) throw new TranslationError('route type Realtime is not supported by this provider', 501);
  const q = endpoint.path.indexOf('?');
  const params = new URLSearchParams(q < 0 ? '' : endpoint.path.slice(q + 1));
  const own = new Set(params.keys());
  for (const [k, v] of url.searchParams) if (!own.has(k)) params.append(k, k === 'model' ? model : v);
  if (model && !params.has('model') && !own.has('deployment')) params.set('model', model);
  const query = params.toString();
  const base = q < 0 ? endpoint.path : endpoint.path.slice(0, q);
  const raw: StreamTranslator = { push: (c) => [c], end: () => [], usage: () => undefined, failed: false };
  return {
    kind: 'forward',
    upstream: { ...target, method: input.method ?? 'GET', path: query ? `${base}?${query}` : base, headers: endpoint.headers, body: input.body, credential: endpoint.credential },
    model, stream: true, clientFormat: 'realtime', upstreamFormat: 'realtime', streamHeaders: {},
    translateResponse: (status, headers, body) => ({ status, headers: { 'content-type': firstHeader(headers['content-type']) ?? 'application/json' }, body }),
    createStreamTranslator: () => raw,
  };
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
