/** Canonical events → OpenAI chat completion chunks. */
import type { FinishReason, StreamEvent } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { ChatChunk } from '../../formats/openai-chat.ts';
import type { Usage } from '../../usage.ts';
import { usageToChatUsage } from '../../convert/chat/response.ts';
import { toChatFinish } from '../../convert/finish.ts';
import { errorBody } from '../../errors.ts';
import { formatSSE } from '../sse.ts';
import type { ClientEncoder, EncoderRequestInfo } from './encoder.ts';

type Delta = ChatChunk['choices'][number]['delta'];

export class ChatStreamEncoder implements ClientEncoder {
  private readonly info: EncoderRequestInfo;
  private readonly ctx: TranslationContext;
  private id = '';
  private model: string;
  private started = false;
  private finishReason: FinishReason | undefined;
  /** Upstream tool-call keys → the chunk's `index` (dense, in order of appearance). */
  private readonly toolIndex = new Map<number, number>();

  constructor(info: EncoderRequestInfo, ctx: TranslationContext) {
    this.info = info;
    this.ctx = ctx;
    this.model = info.model;
  }

  push(ev: Exclude<StreamEvent, { type: 'usage' }>): string[] {
    const out: string[] = [];
    if (ev.type === 'error') {
      out.push(formatSSE(JSON.stringify(errorBody({ status: ev.status, message: ev.message, type: ev.errorType }, 'openai'))));
      return out;
    }
    if (!this.started) {
      this.started = true;
      this.id = ev.type === 'start' && ev.id ? (ev.id.startsWith('chatcmpl') ? ev.id : `chatcmpl-${ev.id}`) : this.ctx.newId('chatcmpl-');
      if (ev.type === 'start' && ev.model) this.model = ev.model;
      out.push(this.chunk({ role: 'assistant', content: '' }));
    }
    switch (ev.type) {
      case 'text': out.push(this.chunk({ content: ev.text })); break;
      case 'thinking': out.push(this.chunk({ reasoning_content: ev.text })); break;
      case 'thinking_signature': out.push(this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: ev.signature }] })); break;
      case 'redacted_thinking': out.push(this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: ev.data }] })); break;
      case 'tool_call_start': {
        const index = this.toolIndex.size;
        this.toolIndex.set(ev.key, index);
        out.push(this.chunk({ tool_calls: [{ index, id: ev.id, type: 'function', function: { name: ev.name, arguments: '' } }] }));
        break;
      }
      case 'tool_call_args': {
        const index = this.toolIndex.get(ev.key);
        if (index !== undefined) out.push(this.chunk({ tool_calls: [{ index, function: { arguments: ev.delta } }] }));
        break;
      }
      case 'finish': this.finishReason = ev.reason; break;
      case 'start': break;
    }
    return out;
  }

  finish(usage: Usage | undefined): string[] {
    const out: string[] = [];
    if (!this.started) out.push(...this.push({ type: 'start' }));
    out.push(this.chunk({}, toChatFinish(this.finishReason ?? 'stop')));
    if (this.info.includeUsage && usage) {
      const c: ChatChunk = { id: this.id, object: 'chat.completion.chunk', created: this.ctx.now(), model: this.model, choices: [], usage: usageToChatUsage(usage) };
      out.push(formatSSE(JSON.stringify(c)));
    }
    out.push(formatSSE('[DONE]'));
    return out;
  }

  private chunk(delta: Delta, finish: ChatChunk['choices'][number]['finish_reason'] = null): string {
    const c: ChatChunk = { id: this.id, object: 'chat.completion.chunk', created: this.ctx.now(), model: this.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
    return formatSSE(JSON.stringify(c));
  }
}
