/** Gemini generateContent response → canonical response. */
import type { Part, Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { GeminiPart, GeminiResponse, GeminiUsageMetadata } from '../../formats/gemini.ts';
import { makeUsage, type Usage } from '../../usage.ts';
import { fromGeminiFinish } from '../finish.ts';
import { compact } from '../shared.ts';

export function geminiUsageToUsage(u: GeminiUsageMetadata): Usage {
  const thoughts = u.thoughtsTokenCount ?? 0;
  return makeUsage({
    // promptTokenCount already includes cached content.
    inputTokens: u.promptTokenCount ?? 0,
    outputTokens: (u.candidatesTokenCount ?? 0) + thoughts,
    totalTokens: u.totalTokenCount,
    cachedInputTokens: u.cachedContentTokenCount,
    reasoningTokens: thoughts,
  });
}

/** One Gemini part as canonical parts; a signature on a non-thought part becomes a bare signed thinking part before it. */
export function readGeminiPart(p: GeminiPart, ctx: TranslationContext): Part[] {
  if (p.thought) return [compact({ type: 'thinking' as const, text: p.text ?? '', signature: p.thoughtSignature })];
  const out: Part[] = [];
  if (p.thoughtSignature) out.push({ type: 'thinking', text: '', signature: p.thoughtSignature });
  if (p.functionCall) {
    out.push({ type: 'tool_call', id: p.functionCall.id ?? ctx.newId('call_'), name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) });
  } else if (typeof p.text === 'string' && p.text !== '') {
    out.push({ type: 'text', text: p.text });
  }
  return out;
}

export function readGeminiResponse(body: GeminiResponse, requestedModel: string, ctx: TranslationContext): Response {
  const cand = body.candidates?.[0];
  const parts = (cand?.content?.parts ?? []).flatMap((p) => readGeminiPart(p, ctx));
  let finishReason = fromGeminiFinish(cand?.finishReason);
  if (parts.some((p) => p.type === 'tool_call') && finishReason === 'stop') finishReason = 'tool_calls';
  if (!cand && body.promptFeedback?.blockReason) finishReason = 'content_filter';
  return compact({
    id: body.responseId ?? ctx.newId('gen-'),
    model: body.modelVersion ?? requestedModel,
    parts,
    finishReason,
    usage: body.usageMetadata ? geminiUsageToUsage(body.usageMetadata) : undefined,
  });
}
