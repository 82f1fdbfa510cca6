/** Canonical events → OpenAI chat completion chunks. */
import type { FinishReason, StreamEvent } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { ChatChunk } from '../../formats/openai-chat.ts';
import type { Usage } from '../../usage.ts';
import { usageToChatUsage } from '../../convert/chat/response.ts';
import { toChatFinish } from '../../convert/finish.ts';
import { markSignature } from '../../convert/signatures.ts';
import { separatorFor, urlCitation } from '../../convert/text-runs.ts';
import { errorBody } from '../../errors.ts';
import { jsonSSE } from '../sse.ts';
import type { ClientEncoder, EncoderRequestInfo } from './encoder.ts';

type Delta = ChatChunk['choices'][number]['delta'];
type Finish = ChatChunk['choices'][number]['finish_reason'];

/** The end of a chunk with no finish reason (every chunk but the last), as serialised. */
const OPEN_CHUNK_TAIL = ',"finish_reason":null,"logprobs":null}]}\n\n';
const ROLE_DELTA = JSON.stringify({ role: 'assistant', content: '' } satisfies Delta);

/**
 * `{"id":…,"object":"chat.completion.chunk","created":…,"model":…` — the fields every chunk of a
 * stream repeats unchanged (OpenAI keeps `created` for the whole stream too), serialised once.
 * Key order is ChatChunk's, so a chunk's bytes equal JSON.stringify of the whole ChatChunk.
 */
function chunkEnvelope(id: string, created: number, model: string): string {
  return `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)}`;
}

export class ChatStreamEncoder implements ClientEncoder {
  private readonly info: EncoderRequestInfo;
  private readonly ctx: TranslationContext;
  private model: string;
  private started = false;
  /** Set at the stream's start: the envelope (chunkEnvelope), and everything before a chunk's delta. */
  private envelope = '';
  private deltaHead = '';
  private finishReason: FinishReason | undefined;
  /** Upstream tool-call keys → the chunk's `index` (dense, in order of appearance). */
  private readonly toolIndex = new Map<number, number>();
  /** Last UTF-16 unit of the content sent so far (-1: none), and whether non-text content came since. */
  private lastCode = -1;
  private broken = false;
  /** Content sent so far (citations count characters into it) and where the current run starts in it. */
  private content = '';
  private runStart = 0;

  constructor(info: EncoderRequestInfo, ctx: TranslationContext) {
    this.info = info;
    this.ctx = ctx;
    this.model = info.model;
  }

  push(ev: Exclude<StreamEvent, { type: 'usage' }>): string[] {
    const out: string[] = [];
    if (ev.type === 'error') {
      out.push(jsonSSE(JSON.stringify(errorBody({ status: ev.status, message: ev.message, type: ev.errorType }, 'openai'))));
      return out;
    }
    if (!this.started) {
      this.started = true;
      const id = ev.type === 'start' && ev.id ? (ev.id.startsWith('chatcmpl') ? ev.id : `chatcmpl-${ev.id}`) : this.ctx.newId('chatcmpl-');
      if (ev.type === 'start' && ev.model) this.model = ev.model;
      this.envelope = chunkEnvelope(id, this.ctx.now(), this.model);
      this.deltaHead = `data: ${this.envelope},"choices":[{"index":0,"delta":`;
      out.push(this.deltaHead + ROLE_DELTA + OPEN_CHUNK_TAIL);
    }
    switch (ev.type) {
      // The common event: its delta is written without building a chunk object.
      case 'text': out.push(`${this.deltaHead}{"content":${JSON.stringify(this.text(ev.text))}}${OPEN_CHUNK_TAIL}`); break;
      case 'thinking':
        if (ev.text) this.broken = true;
        out.push(this.chunk({ reasoning_content: ev.text }));
        break;
      // Chat has no vendor of its own: every signature carries its family's mark.
      case 'thinking_signature': out.push(this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: markSignature(ev.signature, ev.family, undefined) }] })); break;
      case 'redacted_thinking':
        this.broken = true;
        out.push(this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: ev.data }] }));
        break;
      case 'web_search': this.broken = true; break;
      case 'citation': {
        const c = ev.citation;
        const at = { ...c, start: this.runStart + c.start, end: this.runStart + c.end };
        out.push(this.chunk({ annotations: [{ type: 'url_citation', url_citation: urlCitation(this.content, at) }] }));
        break;
      }
      case 'tool_call_start': {
        this.broken = true;
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
    if (this.info.includeUsage && usage) out.push(jsonSSE(`${this.envelope},"choices":[],"usage":${JSON.stringify(usageToChatUsage(usage))}}`));
    out.push(jsonSSE('[DONE]'));
    return out;
  }

  /** A text delta as sent: a new run after non-text content gets a separator first. */
  private text(text: string): string {
    if (text === '') return text;
    if (this.broken) {
      this.broken = false;
      const sep = separatorFor(this.lastCode, text);
      this.runStart = this.content.length + sep.length;
      text = sep + text;
    }
    this.lastCode = text.charCodeAt(text.length - 1);
    this.content += text;
    return text;
  }

  /** Only the delta and finish reason are serialised per chunk; the rest is the stream's deltaHead. */
  private chunk(delta: Delta, finish: Finish = null): string {
    const tail = finish === null ? OPEN_CHUNK_TAIL : `,"finish_reason":${JSON.stringify(finish)},"logprobs":null}]}\n\n`;
    return this.deltaHead + JSON.stringify(delta) + tail;
  }
}
