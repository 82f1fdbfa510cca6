/** OpenAI chat completion chunks → canonical events. */
import type { StreamEvent } from '../../canonical.ts';
import type { ChatChunk } from '../../formats/openai-chat.ts';
import { chatUsageToUsage } from '../../convert/chat/response.ts';
import { fromChatFinish } from '../../convert/finish.ts';
import { readSignature } from '../../convert/signatures.ts';
import { SSEDecoder } from './decoder.ts';

export class ChatStreamDecoder extends SSEDecoder {
  private started = false;
  private finished = false;

  protected handle(_event: string | undefined, data: unknown): StreamEvent[] {
    if (data === '[DONE]') {
      this.complete = true;
      return [];
    }
    const obj = data as ChatChunk & { error?: { message?: string; type?: string; code?: unknown } };
    if (obj.error) return [{ type: 'error', status: 502, errorType: obj.error.type ?? 'api_error', message: obj.error.message ?? 'upstream error' }];
    const out: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start', id: obj.id, model: obj.model });
    }
    for (const choice of obj.choices ?? []) {
      // The gateway asks for one choice; n > 1 is not translated.
      if (choice.index !== 0) continue;
      const d = choice.delta ?? {};
      if (d.reasoning_content) out.push({ type: 'thinking', text: d.reasoning_content });
      for (const b of d.thinking_blocks ?? []) {
        if (b.type === 'thinking' && b.signature) out.push({ type: 'thinking_signature', ...readSignature(b.signature, 'anthropic') });
        if (b.type === 'redacted_thinking') out.push({ type: 'redacted_thinking', data: b.data });
      }
      if (d.content) out.push({ type: 'text', text: d.content });
      for (const tc of d.tool_calls ?? []) {
        const sig = tc.extra_content?.google?.thought_signature;
        if (sig) out.push({ type: 'thinking_signature', ...readSignature(sig, 'gemini') });
        if (tc.id) out.push({ type: 'tool_call_start', key: tc.index, id: tc.id, name: tc.function?.name ?? '' });
        if (tc.function?.arguments) out.push({ type: 'tool_call_args', key: tc.index, delta: tc.function.arguments });
      }
      if (choice.finish_reason) {
        this.finished = true;
        out.push({ type: 'finish', reason: fromChatFinish(choice.finish_reason) });
      }
    }
    if (obj.usage) out.push({ type: 'usage', usage: chatUsageToUsage(obj.usage) });
    return out;
  }

  /** Some OpenAI-compatible servers omit `[DONE]`; a finish reason is proof enough. */
  protected override finishStream(): StreamEvent[] {
    if (this.finished) this.complete = true;
    return [];
  }
}
