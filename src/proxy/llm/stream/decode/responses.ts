/**
 * OpenAI Responses stream, read only for what the gateway needs on the passthrough path: usage
 * from the terminal event, and whether the stream completed or failed.
 */
import type { StreamEvent } from '../../canonical.ts';
import type { ResponsesResponse } from '../../formats/openai-responses.ts';
import { makeUsage } from '../../usage.ts';
import { SSEDecoder } from './decoder.ts';

export class ResponsesUsageDecoder extends SSEDecoder {
  protected handle(_event: string | undefined, data: unknown): StreamEvent[] {
    const e = data as { type?: string; response?: ResponsesResponse; message?: string; code?: string };
    if (e.type === 'error') return [{ type: 'error', status: 500, errorType: e.code ?? 'api_error', message: e.message ?? 'upstream error' }];
    if (e.type === 'response.completed' || e.type === 'response.incomplete' || e.type === 'response.failed') {
      this.complete = true;
      const u = e.response?.usage;
      if (!u) return [];
      return [{ type: 'usage', usage: makeUsage({
        inputTokens: u.input_tokens, outputTokens: u.output_tokens, totalTokens: u.total_tokens,
        cachedInputTokens: u.input_tokens_details?.cached_tokens, reasoningTokens: u.output_tokens_details?.reasoning_tokens,
      }) }];
    }
    return [];
  }
}
