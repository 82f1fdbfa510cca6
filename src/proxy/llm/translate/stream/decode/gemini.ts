/** Gemini streamGenerateContent (alt=sse) chunks → canonical events. Each chunk is a whole GenerateContentResponse. */
import type { StreamEvent } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { GeminiError, GeminiGroundingMetadata, GeminiResponse } from '../../formats/gemini.ts';
import { compact } from '../../convert/shared.ts';
import { utf16FromUtf8 } from '../../convert/text-runs.ts';
import { geminiUsageToUsage } from '../../convert/gemini/response.ts';
import { fromGeminiFinish } from '../../convert/finish.ts';
import { SSEDecoder } from './decoder.ts';

export class GeminiStreamDecoder extends SSEDecoder {
  private started = false;
  private calls = 0;
  private finished = false;
  private readonly ctx: TranslationContext;
  /** The answer text so far (grounding offsets count UTF-8 bytes into it) and where the current run began. */
  private text = '';
  private runStart = 0;
  private inRun = false;
  private cited: Set<string> | undefined;
  private searched = false;

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
        if (p.text) {
          this.inRun = false;
          out.push({ type: 'thinking', text: p.text });
        }
        if (p.thoughtSignature) out.push({ type: 'thinking_signature', signature: p.thoughtSignature, family: 'gemini' });
        continue;
      }
      if (p.thoughtSignature) out.push({ type: 'thinking_signature', signature: p.thoughtSignature, family: 'gemini' });
      if (p.functionCall) {
        this.inRun = false;
        // Gemini sends each call whole, so one start and one argument delta.
        const key = this.calls++;
        out.push({ type: 'tool_call_start', key, id: p.functionCall.id ?? this.ctx.newId('call_'), name: p.functionCall.name });
        out.push({ type: 'tool_call_args', key, delta: JSON.stringify(p.functionCall.args ?? {}) });
      } else if (p.text) {
        if (!this.inRun) {
          this.inRun = true;
          this.runStart = this.text.length;
        }
        this.text += p.text;
        out.push({ type: 'text', text: p.text });
      }
    }
    if (cand?.groundingMetadata) this.grounding(cand.groundingMetadata, out);
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

  /**
   * Sources as citation events (offsets relative to the current run), then the search itself.
   * Streamed segments are taken to count bytes into the whole answer text; a segment repeated in
   * a later chunk is not cited twice.
   */
  private grounding(g: GeminiGroundingMetadata, out: StreamEvent[]): void {
    const chunks = g.groundingChunks ?? [];
    for (const s of g.groundingSupports ?? []) {
      const seg = s.segment;
      if (!seg) continue;
      const key = `${seg.partIndex ?? 0}:${seg.startIndex ?? 0}:${seg.endIndex ?? 0}`;
      if (this.cited?.has(key)) continue;
      (this.cited ??= new Set()).add(key);
      const start = utf16FromUtf8(this.text, seg.startIndex ?? 0);
      const end = utf16FromUtf8(this.text, seg.endIndex ?? 0, start, Buffer.byteLength(this.text.slice(0, start)));
      if (start < this.runStart) continue;
      for (const ci of s.groundingChunkIndices ?? []) {
        const web = chunks[ci]?.web;
        if (web?.uri) out.push({ type: 'citation', citation: compact({ url: web.uri, title: web.title, citedText: seg.text, start: start - this.runStart, end: end - this.runStart }) });
      }
    }
    if (!this.searched && g.webSearchQueries?.length) {
      this.searched = true;
      this.inRun = false;
      out.push({ type: 'web_search', id: this.ctx.newId('ws_'), queries: [...g.webSearchQueries] });
    }
  }

  /** Gemini has no terminal event: the stream is complete if a finish reason arrived. */
  protected override finishStream(): StreamEvent[] {
    if (this.finished) this.complete = true;
    return [];
  }
}
