/** Gemini streamGenerateContent (alt=sse) chunks → canonical events. Each chunk is a whole GenerateContentResponse. */
import type { StreamEvent } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { GeminiError, GeminiResponse } from '../../formats/gemini.ts';
import { geminiUsageToUsage } from '../../convert/gemini/response.ts';
import { fromGeminiFinish } from '../../convert/finish.ts';
import { SSEDecoder } from './decoder.ts';

export class GeminiStreamDecoder extends SSEDecoder {
  private started = false;
  private calls = 0;
  private finished = false;
  private readonly ctx: TranslationContext;

  constructor(ctx: TranslationContext) {
    super();
    this.ctx = ctx;
  }

  protected handle(_event: string | undefined, data: unknown): StreamEvent[] {
    const err = (data as Partial<GeminiError>).error;
    if (err) return [{ type: 'error', status: err.code ?? 500, errorType: err.status ?? 'api_error', message: err.message ?? 'upstream error' }];
    const chunk = data as GeminiResponse;
    const out: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: chunk.responseId, model: chunk.modelVersion });
    }
    const cand = chunk.candidates?.[0];
    for (const p of cand?.content?.parts ?? []) {
      if (p.thought) {
        if (p.text) out.push({ type: 'thinking', text: p.text });
        if (p.thoughtSignature) out.push({ type: 'thinking_signature', signature: p.thoughtSignature });
        continue;
      }
      if (p.thoughtSignature) out.push({ type: 'thinking_signature', signature: p.thoughtSignature });
      if (p.functionCall) {
        // Gemini sends each call whole, so one start and one argument delta.
        const key = this.calls++;
        out.push({ type: 'tool_call_start', key, id: p.functionCall.id ?? this.ctx.newId('call_'), name: p.functionCall.name });
        out.push({ type: 'tool_call_args', key, delta: JSON.stringify(p.functionCall.args ?? {}) });
      } else if (p.text) {
        out.push({ type: 'text', text: p.text });
      }
    }
    if (chunk.usageMetadata) out.push({ type: 'usage', usage: geminiUsageToUsage(chunk.usageMetadata) });
    if (cand?.finishReason) {
      this.finished = true;
      const reason = fromGeminiFinish(cand.finishReason);
      out.push({ type: 'finish', reason: reason === 'stop' && this.calls > 0 ? 'tool_calls' : reason });
    } else if (!cand && chunk.promptFeedback?.blockReason) {
      this.finished = true;
      out.push({ type: 'finish', reason: 'content_filter' });
    }
    return out;
  }

  /** Gemini has no terminal event: the stream is complete if a finish reason arrived. */
  protected override finishStream(): StreamEvent[] {
    if (this.finished) this.complete = true;
    return [];
  }
}
