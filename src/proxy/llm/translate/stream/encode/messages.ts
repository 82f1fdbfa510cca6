/** Canonical events → Anthropic Messages stream, in the order the SDK insists on. */
import type { FinishReason, StreamEvent } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { MessagesContentBlock, MessagesDelta, MessagesStreamEvent } from '../../formats/anthropic.ts';
import { mergeUsage, type Usage } from '../../usage.ts';
import { usageToMessagesUsage } from '../../convert/messages/response.ts';
import { toMessagesStop } from '../../convert/finish.ts';
import { markSignature } from '../../convert/signatures.ts';
import { errorBody } from '../../errors.ts';
import { jsonSSE } from '../sse.ts';
import type { ClientEncoder, EncoderRequestInfo } from './encoder.ts';

type Open = { kind: 'text' | 'thinking' } | { kind: 'tool'; key: number };

export class MessagesStreamEncoder implements ClientEncoder {
  readonly sequentialToolCalls = true;
  private readonly ctx: TranslationContext;
  private model: string;
  private started = false;
  private startUsage: Usage | undefined;
  private open: Open | undefined;
  private index = -1;
  /** `event: content_block_delta` up to the open block's delta, serialised once per block. */
  private deltaHead = '';
  private finishReason: FinishReason | undefined;
  private stopSequence: string | undefined;

  constructor(info: EncoderRequestInfo, ctx: TranslationContext) {
    this.ctx = ctx;
    this.model = info.model;
  }

  push(ev: Exclude<StreamEvent, { type: 'usage' }>): string[] {
    if (ev.type === 'error') {
      return [jsonSSE(JSON.stringify(errorBody({ status: ev.status, message: ev.message, type: ev.errorType }, 'anthropic')), 'error')];
    }
    const out: string[] = [];
    if (!this.started) out.push(this.messageStart(ev));
    switch (ev.type) {
      case 'text':
        if (this.open?.kind !== 'text') out.push(...this.openBlock({ kind: 'text' }, { type: 'text', text: '' }));
        // The common event: written without building an event object.
        out.push(`${this.deltaHead}{"type":"text_delta","text":${JSON.stringify(ev.text)}}}\n\n`);
        break;
      case 'thinking':
        if (this.open?.kind !== 'thinking') out.push(...this.openBlock({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' }));
        out.push(this.delta({ type: 'thinking_delta', thinking: ev.text }));
        break;
      case 'thinking_signature':
        // A signature seals the open thinking block; Gemini sends a bare one, which gets its own block.
        if (this.open?.kind !== 'thinking') out.push(...this.openBlock({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' }));
        out.push(this.delta({ type: 'signature_delta', signature: markSignature(ev.signature, ev.family, 'anthropic') }));
        out.push(...this.closeBlock());
        break;
      case 'redacted_thinking':
        out.push(...this.openBlock(undefined, { type: 'redacted_thinking', data: ev.data }));
        out.push(...this.closeBlock(true));
        break;
      case 'tool_call_start':
        out.push(...this.openBlock({ kind: 'tool', key: ev.key }, { type: 'tool_use', id: ev.id, name: ev.name, input: {} }));
        break;
      case 'tool_call_args':
        // Calls arrive one after another (ToolCallSequencer holds concurrent ones); a late delta for a closed block has nowhere to go.
        if (this.open?.kind === 'tool' && this.open.key === ev.key) out.push(this.delta({ type: 'input_json_delta', partial_json: ev.delta }));
        break;
      case 'finish':
        this.finishReason = ev.reason;
        this.stopSequence = ev.stopSequence;
        break;
      // Another provider's search and its sources: plain text for Anthropic clients (see writeMessagesResponse).
      case 'start':
      case 'web_search':
      case 'citation':
        break;
    }
    return out;
  }

  finish(usage: Usage | undefined): string[] {
    const out: string[] = [];
    if (!this.started) out.push(this.messageStart({ type: 'start' }));
    out.push(...this.closeBlock());
    const final = usageToMessagesUsage(usage ?? mergeUsage(this.startUsage, {}));
    out.push(this.event({
      type: 'message_delta',
      delta: { stop_reason: toMessagesStop(this.finishReason ?? 'stop'), stop_sequence: this.stopSequence ?? null },
      usage: final,
    }));
    out.push(this.event({ type: 'message_stop' }));
    return out;
  }

  private messageStart(ev: Exclude<StreamEvent, { type: 'usage' | 'error' }>): string {
    this.started = true;
    const id = ev.type === 'start' && ev.id?.startsWith('msg_') ? ev.id : this.ctx.newId('msg_');
    if (ev.type === 'start' && ev.model) this.model = ev.model;
    if (ev.type === 'start' && ev.usage) this.startUsage = mergeUsage(undefined, ev.usage);
    const usage = this.startUsage ? usageToMessagesUsage(this.startUsage) : { input_tokens: 0, output_tokens: 0 };
    return this.event({
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage },
    });
  }

  private openBlock(open: Open | undefined, block: MessagesContentBlock): string[] {
    const out = this.closeBlock();
    this.index++;
    this.open = open;
    this.deltaHead = `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.index},"delta":`;
    out.push(this.event({ type: 'content_block_start', index: this.index, content_block: block }));
    return out;
  }

  private closeBlock(force = false): string[] {
    if (!this.open && !force) return [];
    this.open = undefined;
    return [this.event({ type: 'content_block_stop', index: this.index })];
  }

  /** Same bytes as event({ type: 'content_block_delta', index, delta }), the block's part serialised once. */
  private delta(delta: MessagesDelta): string {
    return `${this.deltaHead}${JSON.stringify(delta)}}\n\n`;
  }

  private event(e: MessagesStreamEvent): string {
    return jsonSSE(JSON.stringify(e), e.type);
  }
}
