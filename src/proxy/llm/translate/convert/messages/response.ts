/** Anthropic Messages response ⇄ canonical response. */
import type { Citation, Part, Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { MessagesResponse, MessagesUsage, MessagesWebSearchCitation } from '../../formats/anthropic.ts';
import { makeUsage, uncachedInputTokens, type Usage } from '../../usage.ts';
import { fromMessagesStop, toMessagesStop } from '../finish.ts';
import { compact } from '../shared.ts';
import { markSignature } from '../signatures.ts';
import type { ToolNameMap } from '../tool-names.ts';
import { readBlock, writeBlock } from './request.ts';


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

/** Web search sources of a text block (other citation kinds point into request documents and are not carried). */
export function readWebCitations(text: string, citations: readonly unknown[] | null | undefined): Citation[] | undefined {
  let out: Citation[] | undefined;
  for (const c of citations ?? []) {
    const w = c as Partial<MessagesWebSearchCitation>;
    if (w.type !== 'web_search_result_location' || !w.url) continue;
    (out ??= []).push(compact({ url: w.url, title: w.title ?? undefined, citedText: w.cited_text, start: 0, end: text.length }));
  }
  return out;
}

/** The search query of a server_tool_use input (`{"query": …}`). */
export function searchQuery(input: unknown): string[] {
  const q = (input as { query?: unknown } | null)?.query;
  return typeof q === 'string' ? [q] : [];
}

export function readMessagesResponse(body: MessagesResponse, names?: ToolNameMap): Response {
  const parts: Part[] = [];
  let queries: Map<string, string[]> | undefined;
  for (const b of body.content ?? []) {
    switch (b.type) {
      case 'server_tool_use':
        if (b.name === 'web_search') (queries ??= new Map()).set(b.id, searchQuery(b.input));
        break;
      case 'web_search_tool_result':
        // The results themselves are encrypted for Anthropic; clients get the search and, in the text, its citations.
        parts.push(compact({ type: 'web_search' as const, id: b.tool_use_id, queries: queries?.get(b.tool_use_id) ?? [], failed: Array.isArray(b.content) ? undefined : true }));
        break;
      case 'web_fetch_tool_result':
      case 'code_execution_tool_result':
        // Other server tools run and stay on Anthropic's side; the answer is in the text blocks.
        break;
      case 'text': {
        const citations = readWebCitations(b.text, b.citations);
        parts.push(citations ? { type: 'text', text: b.text, citations } : readBlock(b, names));
        break;
      }
      default:
        parts.push(readBlock(b, names));
    }
  }
  return compact({
    id: body.id,
    model: body.model,
    parts,
    finishReason: fromMessagesStop(body.stop_reason),
    stopSequence: body.stop_sequence ?? undefined,
    usage: body.usage ? messagesUsageToUsage(body.usage) : undefined,
  });
}

export function writeMessagesResponse(res: Response, ctx: TranslationContext): MessagesResponse {
  const content = res.parts
    // Every thinking part reaches the client (Gemini's bare thoughtSignature too, so it round-trips),
    // signed by another family than Anthropic's with that family's mark. Searches another provider
    // ran and their sources are not rendered as web_search_result_location blocks: those need
    // Anthropic's encrypted_index, which cannot be made up; the answer comes as plain text.
    .map((p) => (p.type === 'thinking' ? { type: 'thinking' as const, thinking: p.text, signature: markSignature(p.signature ?? '', p.family, 'anthropic') } : writeBlock(p)))
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
