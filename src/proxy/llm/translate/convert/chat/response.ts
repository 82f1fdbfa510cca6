/** OpenAI chat completions response ⇄ canonical response. */
import type { Part, Response } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { ChatResponse, ChatThinkingBlock, ChatUsage } from '../../formats/openai-chat.ts';
import { makeUsage, type Usage } from '../../usage.ts';
import { fromChatFinish, toChatFinish } from '../finish.ts';
import { compact } from '../shared.ts';
import { clientThinking, markSignature } from '../signatures.ts';
import { joinText, urlCitation } from '../text-runs.ts';

export function chatUsageToUsage(u: ChatUsage): Usage {
  return makeUsage({
    inputTokens: u.prompt_tokens ?? 0,
    outputTokens: u.completion_tokens ?? 0,
    totalTokens: u.total_tokens,
    cachedInputTokens: u.prompt_tokens_details?.cached_tokens,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens,
  });
}

export function usageToChatUsage(u: Usage): ChatUsage {
  const out: ChatUsage = { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.totalTokens };
  if (u.cachedInputTokens !== undefined) out.prompt_tokens_details = { cached_tokens: u.cachedInputTokens };
  if (u.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: u.reasoningTokens };
  return out;
}

export function readChatResponse(body: ChatResponse): Response {
  const choice = body.choices?.[0];
  const msg = choice?.message;
  const parts: Part[] = [];
  if (msg?.thinking_blocks?.length) {
    for (const b of msg.thinking_blocks) parts.push(b.type === 'thinking' ? clientThinking(b.thinking, b.signature, 'anthropic') : { type: 'redacted_thinking', data: b.data });
  } else if (msg?.reasoning_content) {
    parts.push({ type: 'thinking', text: msg.reasoning_content });
  }
  if (msg?.content) parts.push({ type: 'text', text: msg.content });
  else if (msg?.refusal) parts.push({ type: 'text', text: msg.refusal });
  for (const c of msg?.tool_calls ?? []) {
    const sig = c.extra_content?.google?.thought_signature;
    if (sig) parts.push(clientThinking('', sig, 'gemini'));
    parts.push({ type: 'tool_call', id: c.id, name: c.function.name, arguments: c.function.arguments });
  }
  return compact({
    id: body.id,
    model: body.model,
    parts,
    finishReason: fromChatFinish(choice?.finish_reason),
    usage: body.usage ? chatUsageToUsage(body.usage) : undefined,
  });
}

export function writeChatResponse(res: Response, ctx: TranslationContext): ChatResponse {
  const { text, citations } = joinText(res.parts);
  const calls = res.parts.filter((p) => p.type === 'tool_call');
  const thinking = res.parts.filter((p) => p.type === 'thinking' || p.type === 'redacted_thinking');
  const reasoning = thinking.map((p) => (p.type === 'thinking' ? p.text : '')).join('');
  const message: ChatResponse['choices'][number]['message'] = { role: 'assistant', content: text === '' && calls.length ? null : text, refusal: null };
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  }
  if (citations.length) message.annotations = citations.map((c) => ({ type: 'url_citation' as const, url_citation: urlCitation(text, c) }));
  if (reasoning) message.reasoning_content = reasoning;
  // Signed reasoning must come back on the next turn; thinking_blocks carry it (LiteLLM's convention).
  if (thinking.some((p) => p.type === 'redacted_thinking' || p.signature)) {
    // Chat has no vendor of its own: every signature carries its family's mark.
    message.thinking_blocks = thinking.map((p): ChatThinkingBlock => (p.type === 'thinking'
      ? compact({ type: 'thinking' as const, thinking: p.text, signature: p.signature === undefined ? undefined : markSignature(p.signature, p.family, undefined) })
      : { type: 'redacted_thinking', data: p.data }));
  }
  const out: ChatResponse = {
    id: res.id.startsWith('chatcmpl') ? res.id : `chatcmpl-${res.id}`,
    object: 'chat.completion',
    created: ctx.now(),
    model: res.model,
    choices: [{ index: 0, message, finish_reason: toChatFinish(res.finishReason), logprobs: null }],
  };
  if (res.usage) out.usage = usageToChatUsage(res.usage);
  return out;
}
