import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatUsageToUsage, usageToChatUsage } from './convert/chat/response.ts';
import { converseUsageToUsage } from './convert/converse/response.ts';
import { geminiUsageToUsage } from './convert/gemini/response.ts';
import { messagesUsageToUsage, usageToMessagesUsage } from './convert/messages/response.ts';
import { mergeUsage } from './usage.ts';

describe('usage conventions (no double counting)', () => {
  it('Anthropic input excludes cache reads and writes; canonical input includes them, and back', () => {
    const u = messagesUsageToUsage({ input_tokens: 50, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 80 });
    assert.deepEqual(u, { inputTokens: 1250, outputTokens: 80, totalTokens: 1330, cachedInputTokens: 1000, cacheWriteTokens: 200 });
    assert.deepEqual(usageToMessagesUsage(u), { input_tokens: 50, output_tokens: 80, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 });
    assert.deepEqual(usageToChatUsage(u), { prompt_tokens: 1250, completion_tokens: 80, total_tokens: 1330, prompt_tokens_details: { cached_tokens: 1000 } });
  });

  it('OpenAI prompt_tokens already include cached tokens', () => {
    const u = chatUsageToUsage({ prompt_tokens: 120, completion_tokens: 40, total_tokens: 160, prompt_tokens_details: { cached_tokens: 100 } });
    assert.equal(u.inputTokens, 120);
    assert.equal(usageToMessagesUsage(u).input_tokens, 20);
  });

  it('Bedrock works like Anthropic; Gemini like OpenAI, with thoughts in the output', () => {
    assert.equal(converseUsageToUsage({ inputTokens: 30, outputTokens: 25, totalTokens: 1555, cacheReadInputTokens: 1500 }).inputTokens, 1530);
    assert.deepEqual(geminiUsageToUsage({ promptTokenCount: 300, candidatesTokenCount: 20, thoughtsTokenCount: 45, cachedContentTokenCount: 256, totalTokenCount: 365 }),
      { inputTokens: 300, outputTokens: 65, totalTokens: 365, cachedInputTokens: 256, reasoningTokens: 45 });
  });

  it('stream usage merges partial updates (Anthropic message_start, then message_delta)', () => {
    const start = mergeUsage(undefined, { inputTokens: 940, cachedInputTokens: 900, outputTokens: 1 });
    assert.deepEqual(mergeUsage(start, { outputTokens: 61 }), { inputTokens: 940, outputTokens: 61, totalTokens: 1001, cachedInputTokens: 900 });
  });
});
