/** Anthropic Messages response ⇄ canonical response. */
import type { Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { MessagesResponse, MessagesUsage } from '../../formats/anthropic.ts';
import { makeUsage, uncachedInputTokens, type Usage } from '../../usage.ts';
import { fromMessagesStop, toMessagesStop } from '../finish.ts';
import { compact } from '../shared.ts';
import type { ToolNameMap } from '../tool-names.ts';
import { readBlock, writeBlock } from './request.ts';

/** Content blocks of tools Anthropic runs itself (web search, web fetch, code execution…). */
const SERVER_TOOL_BLOCKS: ReadonlySet<string> = new Set(['server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result', 'code_execution_tool_result']);

/** Anthropic's input_tokens excludes cache reads and writes; canonical input includes them. */
export function messagesUsageToUsage(u: Partial<MessagesUsage>): Usage {
  const cached = u.cache_read_input_tokens ?? 0;
  const written = u.cache_creation_input_tokens ?? 0;
  return makeUsage({ inputTokens: (u.input_tokens ?? 0) + cached + written, outputTokens: u.output_tokens ?? 0, cachedInputTokens: cached, cacheWriteTokens: written });
}

export function usageToMessagesUsage(u: Usage): MessagesUsage {
  return {
    input_tokens: uncachedInputTokens(u),
    output_tokens: u.outputTokens,
    cache_creation_input_tokens: u.cacheWriteTokens ?? 0,
    cache_read_input_tokens: u.cachedInputTokens ?? 0,
  };
}

export function readMessagesResponse(body: MessagesResponse, names?: ToolNameMap): Response {
  return compact({
    id: body.id,
    model: body.model,
    // Server tool blocks (web search calls and their encrypted results) stay on Anthropic's side; the answer is in the text blocks.
    parts: (body.content ?? []).filter((b) => !SERVER_TOOL_BLOCKS.has(b.type)).map((b) => readBlock(b, names)),
    finishReason: fromMessagesStop(body.stop_reason),
    stopSequence: body.stop_sequence ?? undefined,
    usage: body.usage ? messagesUsageToUsage(body.usage) : undefined,
  });
}

export function writeMessagesResponse(res: Response, ctx: TranslationContext): MessagesResponse {
  const content = res.parts
    // Every thinking part reaches the client (Gemini's bare thoughtSignature too, so it round-trips).
    .map((p) => (p.type === 'thinking' ? { type: 'thinking' as const, thinking: p.text, signature: p.signature ?? '' } : writeBlock(p)))
    .filter((b) => b !== undefined);
  return {
    id: res.id.startsWith('msg_') ? res.id : ctx.newId('msg_'),
    type: 'message',
    role: 'assistant',
    model: res.model,
    content,
    stop_reason: toMessagesStop(res.finishReason),
    stop_sequence: res.stopSequence ?? null,
    usage: usageToMessagesUsage(res.usage ?? makeUsage({ inputTokens: 0, outputTokens: 0 })),
  };
}
