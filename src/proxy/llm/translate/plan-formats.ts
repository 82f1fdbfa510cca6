/** The facade's per-format decisions: identity or translation, token-count bodies, usage on the passthrough path. */
import type { Request } from './canonical.ts';
import type { ClientFormat } from './codecs.ts';
import type { ProviderToken, RouteType } from './config.ts';
import { chatUsageToUsage } from './convert/chat/response.ts';
import { writeConverseRequest } from './convert/converse/request.ts';
import type { ToolNameMap } from './convert/tool-names.ts';
import { writeGeminiRequest } from './convert/gemini/request.ts';
import { messagesUsageToUsage } from './convert/messages/response.ts';
import { writeMessagesRequest } from './convert/messages/request.ts';
import type { UpstreamFormat } from './providers/types.ts';
import { makeUsage, type Usage } from './usage.ts';

export type Codecs =
  | { readonly kind: 'identity' }
  | { readonly kind: 'count_tokens' }
  | { readonly kind: 'translate'; readonly client: ClientFormat };

const ROUTE_WIRE: Partial<Record<RouteType, UpstreamFormat>> = {
  Completions: 'chat', Messages: 'messages', Responses: 'responses', Embeddings: 'embeddings', TokenCount: 'count_tokens', Realtime: 'realtime', Rerank: 'rerank',
};

export function codecsFor(route: RouteType, upstream: UpstreamFormat): Codecs {
  if (ROUTE_WIRE[route] === upstream) return { kind: 'identity' };
  if (route === 'TokenCount') return { kind: 'count_tokens' };
  if (route === 'Completions') return { kind: 'translate', client: 'chat' };
  if (route === 'Messages') return { kind: 'translate', client: 'messages' };
  if (route === 'Responses') return { kind: 'translate', client: 'responses' };
  throw new Error(`no translation from route ${route} to ${upstream}`);
}

/** An Anthropic count_tokens request in the upstream's count format. */
export function countTokensBody(format: UpstreamFormat, token: ProviderToken, req: Request, names: ToolNameMap): Record<string, unknown> {
  if (format === 'gemini_count_tokens') {
    const { generationConfig: _unused, ...gen } = writeGeminiRequest(req);
    // The Gemini API counts a whole request only inside generateContentRequest; Vertex takes the fields at top level.
    return token === 'providerE' ? { generateContentRequest: { model: `models/${req.model.replace(/^models\//, '')}`, ...gen } } : gen;
  }
  if (format === 'converse_count_tokens') {
    const { messages, system, toolConfig } = writeConverseRequest(req, names);
    return { input: { converse: { messages, ...(system ? { system } : {}), ...(toolConfig ? { toolConfig } : {}) } } };
  }
  const { max_tokens: _m, stream: _s, ...rest } = writeMessagesRequest(req, names);
  return rest;
}

export function readCountTokensResponse(format: UpstreamFormat, body: Uint8Array): { input_tokens: number } {
  const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as { totalTokens?: number; inputTokens?: number; input_tokens?: number };
  if (format === 'gemini_count_tokens') return { input_tokens: parsed.totalTokens ?? 0 };
  if (format === 'converse_count_tokens') return { input_tokens: parsed.inputTokens ?? 0 };
  return { input_tokens: parsed.input_tokens ?? 0 };
}

/** Usage from a native (untranslated) JSON answer, for accounting. */
export function identityUsage(format: UpstreamFormat, body: Uint8Array): Usage | undefined {
  let parsed: { usage?: Record<string, unknown> };
  try { parsed = JSON.parse(Buffer.from(body).toString('utf8')) as typeof parsed; } catch { return undefined; }
  const u = parsed?.usage;
  if (!u || typeof u !== 'object') return undefined;
  if (format === 'chat') return chatUsageToUsage(u as never);
  if (format === 'messages') return messagesUsageToUsage(u as never);
  if (format === 'embeddings') return makeUsage({ inputTokens: Number(u.prompt_tokens ?? 0), outputTokens: 0 });
  // Rerank servers that count tokens (vLLM, Jina, TEI) report `usage.total_tokens`; Cohere bills search units instead.
  if (format === 'rerank') return makeUsage({ inputTokens: Number(u.prompt_tokens ?? u.total_tokens ?? 0), outputTokens: 0 });
  if (format === 'responses') {
    const r = u as { input_tokens?: number; output_tokens?: number; input_tokens_details?: { cached_tokens?: number }; output_tokens_details?: { reasoning_tokens?: number } };
    return makeUsage({ inputTokens: r.input_tokens ?? 0, outputTokens: r.output_tokens ?? 0, cachedInputTokens: r.input_tokens_details?.cached_tokens, reasoningTokens: r.output_tokens_details?.reasoning_tokens });
  }
  return undefined;
}
