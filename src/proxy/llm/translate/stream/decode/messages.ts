/** Anthropic Messages stream events → canonical events. */
import type { Citation, StreamEvent } from '../../canonical.ts';
import type { MessagesStreamEvent, MessagesUsage } from '../../formats/anthropic.ts';
import type { Usage } from '../../usage.ts';
import { fromMessagesStop } from '../../convert/finish.ts';
import { readWebCitations, searchQuery } from '../../convert/messages/response.ts';
import { SSEDecoder } from './decoder.ts';
import { anthropicTextDelta } from './text-delta.ts';
import type { ToolNameMap } from '../../convert/tool-names.ts';

const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400, authentication_error: 401, permission_error: 403, not_found_error: 404,
  request_too_large: 413, rate_limit_error: 429, api_error: 500, overloaded_error: 529,
};

/** Only the fields present: message_delta may carry just output_tokens. */
export function partialMessagesUsage(u: Partial<MessagesUsage>): Partial<Usage> {
  const out: { -readonly [K in keyof Usage]?: Usage[K] } = {};
  if (u.output_tokens != null) out.outputTokens = u.output_tokens;
  if (u.input_tokens != null) {
    const cached = u.cache_read_input_tokens ?? 0;
    const written = u.cache_creation_input_tokens ?? 0;
    out.inputTokens = u.input_tokens + cached + written;
    out.cachedInputTokens = cached;
    out.cacheWriteTokens = written;
  }
  return out;
}

export class MessagesStreamDecoder extends SSEDecoder {
  private readonly names: ToolNameMap | undefined;
  /** Server tool calls being streamed (block index → id, name, input JSON so far). */
  private serverTools: Map<number, { id: string; name: string; json: string }> | undefined;
  /** Web search queries by server tool id, for the result block that follows. */
  private queries: Map<string, string[]> | undefined;
  /** UTF-16 length of the current text run (text since the last non-text content). */
  private runLen = 0;
  private inRun = false;
  /** The open text block: where it starts in the run, and the web sources it cites. */
  private textBlock: { index: number; start: number; citations: Citation[] | undefined } | undefined;

  constructor(names?: ToolNameMap) {
    super();
    this.names = names;
  }

  protected handle(_event: string | undefined, data: unknown): StreamEvent[] {
    const e = data as MessagesStreamEvent;
    switch (e.type) {
      case 'message_start':
        return [{ type: 'start', id: e.message.id, model: e.message.model, usage: partialMessagesUsage(e.message.usage ?? {}) }];
      case 'content_block_start': {
        const b = e.content_block;
        if (b.type === 'text') {
          if (!this.inRun) this.runLen = 0;
          this.textBlock = { index: e.index, start: this.runLen, citations: readWebCitations('', b.citations) };
          return b.text ? [this.text(b.text)] : [];
        }
        this.inRun = false;
        if (b.type === 'tool_use') return [{ type: 'tool_call_start', key: e.index, id: b.id, name: this.names ? this.names.client(b.name) : b.name }];
        if (b.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: b.data }];
        if (b.type === 'thinking' && b.thinking) return [{ type: 'thinking', text: b.thinking }];
        if (b.type === 'server_tool_use') (this.serverTools ??= new Map()).set(e.index, { id: b.id, name: b.name, json: '' });
        if (b.type === 'web_search_tool_result') {
          return [{ type: 'web_search', id: b.tool_use_id, queries: this.queries?.get(b.tool_use_id) ?? [], ...(Array.isArray(b.content) ? {} : { failed: true }) }];
        }
        return [];
      }
      case 'content_block_delta': {
        const d = e.delta;
        if (d.type === 'text_delta') return [this.text(d.text)];
        if (d.type === 'thinking_delta') return [{ type: 'thinking', text: d.thinking }];
        if (d.type === 'signature_delta') return [{ type: 'thinking_signature', signature: d.signature, family: 'anthropic' }];
        if (d.type === 'input_json_delta') {
          const server = this.serverTools?.get(e.index);
          if (server) {
            server.json += d.partial_json;
            return [];
          }
          return d.partial_json ? [{ type: 'tool_call_args', key: e.index, delta: d.partial_json }] : [];
        }
        if (d.type === 'citations_delta' && this.textBlock?.index === e.index) {
          const c = readWebCitations('', [d.citation]);
          if (c) (this.textBlock.citations ??= []).push(...c);
        }
        return [];
      }
      case 'content_block_stop': {
        const server = this.serverTools?.get(e.index);
        if (server) {
          this.serverTools!.delete(e.index);
          if (server.name === 'web_search') {
            let input: unknown;
            try { input = JSON.parse(server.json || '{}'); } catch { input = {}; }
            (this.queries ??= new Map()).set(server.id, searchQuery(input));
          }
          return [];
        }
        const block = this.textBlock;
        if (block?.index !== e.index) return [];
        this.textBlock = undefined;
        // A cited block's sources cover the whole block, known only now that it is complete.
        return block.citations ? block.citations.map((c) => ({ type: 'citation' as const, citation: { ...c, start: block.start, end: this.runLen } })) : [];
      }
      case 'message_delta': {
        const out: StreamEvent[] = [];
        if (e.delta?.stop_reason) out.push({ type: 'finish', reason: fromMessagesStop(e.delta.stop_reason), stopSequence: e.delta.stop_sequence ?? undefined });
        if (e.usage) out.push({ type: 'usage', usage: partialMessagesUsage(e.usage) });
        return out;
      }
      case 'message_stop':
        this.complete = true;
        return [];
      case 'error':
        return [{ type: 'error', status: ERROR_STATUS[e.error?.type] ?? 500, errorType: e.error?.type ?? 'api_error', message: e.error?.message ?? 'upstream error' }];
      default:
        return [];
    }
  }

  /** A text delta in Anthropic's compact shape: the same event as `handle` gives it. */
  protected override quick(data: string): StreamEvent | undefined {
    const text = anthropicTextDelta(data);
    return text === undefined ? undefined : this.text(text);
  }

  private text(text: string): StreamEvent {
    this.runLen += text.length;
    this.inRun = true;
    return { type: 'text', text };
  }
}
