/** Gemini generateContent response → canonical response. */
import type { Citation, Part, Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { GeminiGroundingMetadata, GeminiPart, GeminiResponse, GeminiUsageMetadata } from '../../formats/gemini.ts';
import { makeUsage, type Usage } from '../../usage.ts';
import { fromGeminiFinish } from '../finish.ts';
import { compact } from '../shared.ts';
import { utf16FromUtf8 } from '../text-runs.ts';

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
  if (p.thought) return [compact({ type: 'thinking' as const, text: p.text ?? '', signature: p.thoughtSignature, family: p.thoughtSignature ? 'gemini' as const : undefined })];
  const out: Part[] = [];
  if (p.thoughtSignature) out.push({ type: 'thinking', text: '', signature: p.thoughtSignature, family: 'gemini' });
  if (p.functionCall) {
    out.push({ type: 'tool_call', id: p.functionCall.id ?? ctx.newId('call_'), name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) });
  } else if (typeof p.text === 'string' && p.text !== '') {
    out.push({ type: 'text', text: p.text });
  }
  return out;
}

/**
 * Google Search grounding as canonical parts: the search first (it ran before the answer), then
 * the text parts with the sources of their spans. Segment offsets are UTF-8 bytes within the
 * Gemini part `partIndex`; canonical citations count UTF-16 units within the text part.
 */
function withGrounding(geminiParts: readonly GeminiPart[], parts: Part[], textAt: readonly number[], g: GeminiGroundingMetadata, ctx: TranslationContext): Part[] {
  const chunks = g.groundingChunks ?? [];
  const byPart = new Map<number, Citation[]>();
  for (const s of g.groundingSupports ?? []) {
    const seg = s.segment;
    const gi = seg?.partIndex ?? 0;
    const at = textAt[gi];
    if (!seg || at === undefined) continue;
    const text = geminiParts[gi].text ?? '';
    const start = utf16FromUtf8(text, seg.startIndex ?? 0);
    const end = utf16FromUtf8(text, seg.endIndex ?? 0, start, Buffer.byteLength(text.slice(0, start)));
    for (const ci of s.groundingChunkIndices ?? []) {
      const web = chunks[ci]?.web;
      if (!web?.uri) continue;
      let list = byPart.get(at);
      if (!list) byPart.set(at, (list = []));
      list.push(compact({ url: web.uri, title: web.title, citedText: seg.text, start, end }));
    }
  }
  const out: Part[] = [];
  if (g.webSearchQueries?.length) out.push({ type: 'web_search', id: ctx.newId('ws_'), queries: [...g.webSearchQueries] });
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    const citations = byPart.get(i);
    out.push(citations && p.type === 'text' ? { ...p, citations } : p);
  }
  return out;
}

export function readGeminiResponse(body: GeminiResponse, requestedModel: string, ctx: TranslationContext): Response {
  const cand = body.candidates?.[0];
  const geminiParts = cand?.content?.parts ?? [];
  let parts: Part[] = [];
  // Gemini part index → canonical text part index, for grounding segments.
  const textAt: number[] = [];
  for (let i = 0; i < geminiParts.length; i++) {
    for (const p of readGeminiPart(geminiParts[i], ctx)) {
      if (p.type === 'text') textAt[i] = parts.length;
      parts.push(p);
    }
  }
  if (cand?.groundingMetadata) parts = withGrounding(geminiParts, parts, textAt, cand.groundingMetadata, ctx);
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
