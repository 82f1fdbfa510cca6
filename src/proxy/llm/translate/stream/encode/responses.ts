/** Canonical events → OpenAI Responses streaming events (created … output items … completed). */
import type { FinishReason, Request, StreamEvent } from '../../canonical.ts';
import type { TranslationContext } from '../../context.ts';
import type { ResponsesOutputItem, ResponsesOutputMessage, ResponsesReasoningItem, ResponsesResponse, ResponsesUrlCitation } from '../../formats/openai-responses.ts';
import type { Usage } from '../../usage.ts';
import { REDACTED_PREFIX, responseShell, responsesAnnotation, usageToResponsesUsage, webSearchCall } from '../../convert/responses/response.ts';
import { markSignature } from '../../convert/signatures.ts';
import { openAIErrorType } from '../../errors.ts';
import type { ClientEncoder } from './encoder.ts';

type FunctionCallItem = Extract<ResponsesOutputItem, { type: 'function_call' }>;
type OpenItem =
  /** `runOffset`: UTF-16 offset of this message's text in the current run (citations count from the run). */
  /** `at`: the item's `"item_id":…,"output_index":…` as serialised, fixed while it is open (eventFields). */
  | { kind: 'message'; item: ResponsesOutputMessage; at: string; text: string; runOffset: number; annotations: ResponsesUrlCitation[] }
  | { kind: 'reasoning'; item: ResponsesReasoningItem; at: string; text: string }
  | { kind: 'tool'; item: FunctionCallItem; at: string; key: number };

export class ResponsesStreamEncoder implements ClientEncoder {
  readonly sequentialToolCalls = true;
  private readonly ctx: TranslationContext;
  private readonly response: ResponsesResponse;
  private seq = 0;
  private started = false;
  private open: OpenItem | undefined;
  private finishReason: FinishReason | undefined;
  /** UTF-16 length of the current text run, and whether non-text content ended it. */
  private runLen = 0;
  private broken = false;

  constructor(req: Request, ctx: TranslationContext) {
    this.ctx = ctx;
    this.response = responseShell(req, ctx.newId('resp_'), req.model, ctx.now());
  }

  push(ev: Exclude<StreamEvent, { type: 'usage' }>): string[] {
    if (ev.type === 'error') {
      return [this.event('error', { code: ev.errorType || openAIErrorType(ev.status), message: ev.message, param: null })];
    }
    const out: string[] = [];
    if (!this.started) out.push(...this.start(ev));
    switch (ev.type) {
      case 'text': {
        if (this.broken && ev.text) {
          this.broken = false;
          this.runLen = 0;
        }
        const m = this.open?.kind === 'message' ? this.open : this.openMessage(out);
        m.text += ev.text;
        this.runLen += ev.text.length;
        out.push(this.eventFields('response.output_text.delta', `${m.at},"content_index":0,"delta":${JSON.stringify(ev.text)},"logprobs":[]`));
        break;
      }
      case 'thinking': {
        if (ev.text) this.broken = true;
        const r = this.open?.kind === 'reasoning' ? this.open : this.openReasoning(out);
        if (r.text === '') {
          out.push(this.event('response.reasoning_summary_part.added', { ...this.where(r.item.id), summary_index: 0, part: { type: 'summary_text', text: '' } }));
        }
        r.text += ev.text;
        out.push(this.eventFields('response.reasoning_summary_text.delta', `${r.at},"summary_index":0,"delta":${JSON.stringify(ev.text)}`));
        break;
      }
      case 'thinking_signature': {
        const r = this.open?.kind === 'reasoning' ? this.open : this.openReasoning(out);
        r.item.encrypted_content = markSignature(ev.signature, ev.family, 'openai');
        out.push(...this.close());
        break;
      }
      case 'redacted_thinking': {
        this.broken = true;
        const r = this.openReasoning(out);
        r.item.encrypted_content = REDACTED_PREFIX + ev.data;
        out.push(...this.close());
        break;
      }
      case 'web_search':
        this.broken = true;
        out.push(...this.close(), ...this.webSearch(ev));
        break;
      case 'citation': {
        const m = this.open;
        if (m?.kind !== 'message') break;
        const c = ev.citation;
        const annotation = responsesAnnotation(m.text, { ...c, start: Math.max(0, c.start - m.runOffset), end: Math.max(0, c.end - m.runOffset) });
        out.push(this.event('response.output_text.annotation.added', { ...this.where(m.item.id), content_index: 0, annotation_index: m.annotations.length, annotation }));
        m.annotations.push(annotation);
        break;
      }
      case 'tool_call_start': {
        this.broken = true;
        out.push(...this.close());
        const item: FunctionCallItem = { type: 'function_call', id: this.ctx.newId('fc_'), call_id: ev.id, name: ev.name, arguments: '', status: 'in_progress' };
        this.open = { kind: 'tool', item, at: this.at(item.id), key: ev.key };
        out.push(this.event('response.output_item.added', { output_index: this.response.output.length, item }));
        break;
      }
      case 'tool_call_args':
        if (this.open?.kind === 'tool' && this.open.key === ev.key) {
          this.open.item.arguments += ev.delta;
          out.push(this.eventFields('response.function_call_arguments.delta', `${this.open.at},"delta":${JSON.stringify(ev.delta)}`));
        }
        break;
      case 'finish':
        this.finishReason = ev.reason;
        break;
      case 'start':
        break;
    }
    return out;
  }

  finish(usage: Usage | undefined): string[] {
    const out: string[] = [];
    if (!this.started) out.push(...this.start({ type: 'start' }));
    out.push(...this.close());
    const incomplete = this.finishReason === 'length' || this.finishReason === 'content_filter';
    this.response.status = incomplete ? 'incomplete' : 'completed';
    if (incomplete) this.response.incomplete_details = { reason: this.finishReason === 'length' ? 'max_output_tokens' : 'content_filter' };
    if (usage) this.response.usage = usageToResponsesUsage(usage);
    out.push(this.event(incomplete ? 'response.incomplete' : 'response.completed', { response: this.response }));
    return out;
  }

  private start(ev: Exclude<StreamEvent, { type: 'usage' | 'error' }>): string[] {
    this.started = true;
    if (ev.type === 'start' && ev.model) this.response.model = ev.model;
    // Both events carry the same response: serialised once.
    const response = `"response":${JSON.stringify(this.response)}`;
    return [this.eventFields('response.created', response), this.eventFields('response.in_progress', response)];
  }

  private openMessage(out: string[]): Extract<OpenItem, { kind: 'message' }> {
    out.push(...this.close());
    const item: ResponsesOutputMessage = { type: 'message', id: this.ctx.newId('msg_'), status: 'in_progress', role: 'assistant', content: [] };
    const open = { kind: 'message' as const, item, at: this.at(item.id), text: '', runOffset: this.broken ? 0 : this.runLen, annotations: [] };
    this.open = open;
    out.push(this.event('response.output_item.added', { output_index: this.response.output.length, item }));
    out.push(this.event('response.content_part.added', { ...this.where(item.id), content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
    return open;
  }

  private openReasoning(out: string[]): Extract<OpenItem, { kind: 'reasoning' }> {
    out.push(...this.close());
    const item: ResponsesReasoningItem = { type: 'reasoning', id: this.ctx.newId('rs_'), summary: [] };
    const open = { kind: 'reasoning' as const, item, at: this.at(item.id), text: '' };
    this.open = open;
    out.push(this.event('response.output_item.added', { output_index: this.response.output.length, item }));
    return open;
  }

  /** Ends the open output item with its `.done` events and appends it to the response. */
  private close(): string[] {
    const o = this.open;
    if (!o) return [];
    this.open = undefined;
    const out: string[] = [];
    const where = this.where(o.item.id);
    if (o.kind === 'message') {
      const part = { type: 'output_text' as const, text: o.text, annotations: o.annotations };
      out.push(this.event('response.output_text.done', { ...where, content_index: 0, text: o.text, logprobs: [] }));
      out.push(this.event('response.content_part.done', { ...where, content_index: 0, part }));
      o.item.content = [part];
      o.item.status = 'completed';
    } else if (o.kind === 'reasoning') {
      if (o.text) {
        out.push(this.event('response.reasoning_summary_text.done', { ...where, summary_index: 0, text: o.text }));
        out.push(this.event('response.reasoning_summary_part.done', { ...where, summary_index: 0, part: { type: 'summary_text', text: o.text } }));
        o.item.summary = [{ type: 'summary_text', text: o.text }];
      }
      if (o.item.encrypted_content === undefined) o.item.encrypted_content = null;
    } else {
      out.push(this.event('response.function_call_arguments.done', { ...where, name: o.item.name, arguments: o.item.arguments }));
      o.item.status = 'completed';
    }
    out.push(this.event('response.output_item.done', { output_index: where.output_index, item: o.item }));
    this.response.output.push(o.item);
    return out;
  }

  /** A search that already ran, as the whole web_search_call item lifecycle. */
  private webSearch(ev: Extract<StreamEvent, { type: 'web_search' }>): string[] {
    const item = webSearchCall(ev.id.startsWith('ws_') ? ev.id : this.ctx.newId('ws_'), ev.queries, ev.failed);
    const where = this.where(item.id);
    const out = [
      this.event('response.output_item.added', { output_index: where.output_index, item: { type: item.type, id: item.id, status: 'in_progress' } }),
      this.event('response.web_search_call.in_progress', where),
    ];
    if (!ev.failed) out.push(this.event('response.web_search_call.searching', where), this.event('response.web_search_call.completed', where));
    out.push(this.event('response.output_item.done', { output_index: where.output_index, item }));
    this.response.output.push(item);
    return out;
  }

  /** The open item is always the next one in `output`. */
  private where(itemId: string): { item_id: string; output_index: number } {
    return { item_id: itemId, output_index: this.response.output.length };
  }

  /** `where(itemId)` as serialised by event(): the fields every event of one open item starts with. */
  private at(itemId: string): string {
    return `"item_id":${JSON.stringify(itemId)},"output_index":${this.response.output.length}`;
  }

  /**
   * Serialised at once: objects passed in (the response, an item) are written as they are now,
   * with no copy, even though the encoder changes them later.
   */
  private event(type: string, body: Record<string, unknown>): string {
    const json = JSON.stringify(body);
    return this.eventFields(type, json.length === 2 ? '' : json.slice(1, -1));
  }

  /**
   * Same bytes as formatSSE(JSON.stringify({ type, sequence_number, ...fields })): `fields` is the
   * serialised rest of the object without its braces. `type` is one of this encoder's own event
   * names (no character JSON would escape).
   */
  private eventFields(type: string, fields: string): string {
    const rest = fields === '' ? '' : `,${fields}`;
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.seq++}${rest}}\n\n`;
  }
}
