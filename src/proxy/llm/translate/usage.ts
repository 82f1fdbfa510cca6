/**
 * Normalised token usage. `inputTokens` follows the OpenAI convention: it INCLUDES cached reads
 * and cache writes. Anthropic and Bedrock report input without them, so their readers add them
 * back and their writers subtract them again; nothing is counted twice.
 */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cachedInputTokens?: number;
  readonly cacheWriteTokens?: number;
  readonly reasoningTokens?: number;
}

export function makeUsage(u: {
  inputTokens: number; outputTokens: number; cachedInputTokens?: number; cacheWriteTokens?: number; reasoningTokens?: number; totalTokens?: number;
}): Usage {
  const out: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    totalTokens: u.totalTokens ?? u.inputTokens + u.outputTokens,
  };
  if (u.cachedInputTokens) out.cachedInputTokens = u.cachedInputTokens;
  if (u.cacheWriteTokens) out.cacheWriteTokens = u.cacheWriteTokens;
  if (u.reasoningTokens) out.reasoningTokens = u.reasoningTokens;
  return out;
}

/** Input tokens as Anthropic/Bedrock count them: without cache reads and writes. */
export function uncachedInputTokens(u: Usage): number {
  return Math.max(0, u.inputTokens - (u.cachedInputTokens ?? 0) - (u.cacheWriteTokens ?? 0));
}

/** Later stream events may carry only part of the usage (Anthropic: output in message_delta). */
export function mergeUsage(prev: Usage | undefined, next: Partial<Usage>): Usage {
  const inputTokens = next.inputTokens ?? prev?.inputTokens ?? 0;
  const outputTokens = next.outputTokens ?? prev?.outputTokens ?? 0;
  return makeUsage({
    inputTokens,
    outputTokens,
    cachedInputTokens: next.cachedInputTokens ?? prev?.cachedInputTokens,
    cacheWriteTokens: next.cacheWriteTokens ?? prev?.cacheWriteTokens,
    reasoningTokens: next.reasoningTokens ?? prev?.reasoningTokens,
  });
}
