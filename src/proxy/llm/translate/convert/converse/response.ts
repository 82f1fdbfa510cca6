/** Bedrock Converse response → canonical response. */
import type { Part, Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { ConverseContentBlock, ConverseResponse, ConverseUsage } from '../../formats/bedrock.ts';
import { makeUsage, type Usage } from '../../usage.ts';
import { fromConverseStop } from '../finish.ts';
import { compact, stringifyArguments } from '../shared.ts';
import type { ToolNameMap } from '../tool-names.ts';

/** Bedrock's inputTokens excludes cache reads and writes; canonical input includes them. */
export function converseUsageToUsage(u: Partial<ConverseUsage>): Usage {
  const cached = u.cacheReadInputTokens ?? 0;
  const written = u.cacheWriteInputTokens ?? 0;
  return makeUsage({ inputTokens: (u.inputTokens ?? 0) + cached + written, outputTokens: u.outputTokens ?? 0, cachedInputTokens: cached, cacheWriteTokens: written });
}

function readBlock(b: ConverseContentBlock, names: ToolNameMap): Part | undefined {
  if ('text' in b) return { type: 'text', text: b.text };
  if ('toolUse' in b) return { type: 'tool_call', id: b.toolUse.toolUseId, name: names.client(b.toolUse.name), arguments: stringifyArguments(b.toolUse.input) };
  if ('reasoningContent' in b) {
    const r = b.reasoningContent;
    if ('redactedContent' in r) return { type: 'redacted_thinking', data: r.redactedContent };
    // Only Claude signs reasoning on Bedrock, and its signatures are Anthropic's (valid on either API).
    return compact({ type: 'thinking' as const, text: r.reasoningText.text, signature: r.reasoningText.signature, family: r.reasoningText.signature ? 'anthropic' as const : undefined });
  }
  return undefined;
}

export function readConverseResponse(body: ConverseResponse, model: string, names: ToolNameMap, ctx: TranslationContext): Response {
  const parts = (body.output?.message?.content ?? []).map((b) => readBlock(b, names)).filter((p) => p !== undefined);
  return compact({
    id: ctx.newId('msg_bdrk_'),
    model,
    parts,
    finishReason: fromConverseStop(body.stopReason),
    usage: body.usage ? converseUsageToUsage(body.usage) : undefined,
  });
}
