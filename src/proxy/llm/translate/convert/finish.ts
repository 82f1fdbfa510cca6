/** Finish reasons in every format, mapped through the canonical set. */
import type { FinishReason } from '../canonical.ts';
import type { ChatFinishReason } from '../formats/openai-chat.ts';
import type { MessagesStopReason } from '../formats/anthropic.ts';
import type { GeminiFinishReason } from '../formats/gemini.ts';
import type { ConverseStopReason } from '../formats/bedrock.ts';

export function fromChatFinish(r: string | null | undefined): FinishReason {
  if (r === 'length') return 'length';
  if (r === 'tool_calls' || r === 'function_call') return 'tool_calls';
  if (r === 'content_filter') return 'content_filter';
  return 'stop';
}

export function toChatFinish(r: FinishReason): ChatFinishReason {
  if (r === 'length' || r === 'tool_calls' || r === 'content_filter') return r;
  return 'stop';
}

export function fromMessagesStop(r: string | null | undefined): FinishReason {
  if (r === 'max_tokens') return 'length';
  if (r === 'tool_use') return 'tool_calls';
  if (r === 'stop_sequence') return 'stop_sequence';
  if (r === 'refusal') return 'content_filter';
  return 'stop';
}

export function toMessagesStop(r: FinishReason): MessagesStopReason {
  if (r === 'length') return 'max_tokens';
  if (r === 'tool_calls') return 'tool_use';
  if (r === 'stop_sequence') return 'stop_sequence';
  if (r === 'content_filter') return 'refusal';
  return 'end_turn';
}

/** Gemini says STOP even when it called a function; the caller upgrades it when calls are present. */
export function fromGeminiFinish(r: GeminiFinishReason | string | undefined): FinishReason {
  if (r === 'MAX_TOKENS') return 'length';
  if (r === 'SAFETY' || r === 'RECITATION' || r === 'BLOCKLIST' || r === 'PROHIBITED_CONTENT' || r === 'SPII') return 'content_filter';
  return 'stop';
}

export function fromConverseStop(r: ConverseStopReason | string | undefined): FinishReason {
  if (r === 'max_tokens') return 'length';
  if (r === 'tool_use') return 'tool_calls';
  if (r === 'stop_sequence') return 'stop_sequence';
  if (r === 'guardrail_intervened' || r === 'content_filtered') return 'content_filter';
  return 'stop';
}
