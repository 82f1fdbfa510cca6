/** Bedrock converse-stream (AWS binary event stream) → canonical events. */
import type { StreamEvent } from '../../canonical.ts';
import type { ConverseStreamEvents } from '../../formats/bedrock.ts';
import type { ToolNameMap } from '../../convert/tool-names.ts';
import { converseUsageToUsage } from '../../convert/converse/response.ts';
import { fromConverseStop } from '../../convert/finish.ts';
import { EventStreamFrameTooLargeError, EventStreamParser, type EventStreamMessage } from '../eventstream.ts';
import { EVENT_TOO_LARGE, TRUNCATED, type UpstreamDecoder } from './decoder.ts';

const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429, validationException: 400, accessDeniedException: 403, resourceNotFoundException: 404,
  serviceUnavailableException: 503, modelTimeoutException: 408, internalServerException: 500, modelStreamErrorException: 424,
};

export class ConverseStreamDecoder implements UpstreamDecoder {
  private readonly parser = new EventStreamParser();
  private readonly names: ToolNameMap;
  private stopped = false;
  private done = false;
  private failed = false;

  constructor(names: ToolNameMap) {
    this.names = names;
  }

  push(chunk: Uint8Array): StreamEvent[] {
    if (this.failed) return [];
    let messages: EventStreamMessage[];
    try {
      messages = this.parser.push(chunk);
    } catch (err) {
      this.failed = true;
      if (err instanceof EventStreamFrameTooLargeError) return [EVENT_TOO_LARGE];
      return [{ type: 'error', status: 502, errorType: 'api_error', message: 'upstream sent a corrupt event-stream frame' }];
    }
    const out: StreamEvent[] = [];
    for (const m of messages) {
      if (this.failed) break;
      out.push(...this.handle(m));
    }
    return out;
  }

  end(): StreamEvent[] {
    if (this.failed) return [];
    // Bedrock ends with messageStop then metadata; without messageStop the answer is incomplete.
    if (!this.stopped || this.parser.pendingBytes > 0) return [TRUNCATED];
    return [];
  }

  private handle(m: EventStreamMessage): StreamEvent[] {
    const text = Buffer.from(m.payload).toString('utf8');
    let payload: Record<string, unknown>;
    try { payload = JSON.parse(text) as Record<string, unknown>; } catch { payload = { message: text }; }
    const messageType = m.headers[':message-type'];
    if (messageType === 'exception' || messageType === 'error') {
      this.failed = true;
      const kind = m.headers[':exception-type'] ?? m.headers[':error-code'] ?? 'internalServerException';
      return [{ type: 'error', status: EXCEPTION_STATUS[kind] ?? 500, errorType: kind, message: String(payload.message ?? payload.Message ?? m.headers[':error-message'] ?? 'upstream error') }];
    }
    switch (m.headers[':event-type']) {
      case 'messageStart':
        return [{ type: 'start' }];
      case 'contentBlockStart': {
        const e = payload as unknown as ConverseStreamEvents['contentBlockStart'];
        const tool = e.start?.toolUse;
        return tool ? [{ type: 'tool_call_start', key: e.contentBlockIndex, id: tool.toolUseId, name: this.names.client(tool.name) }] : [];
      }
      case 'contentBlockDelta': {
        const e = payload as unknown as ConverseStreamEvents['contentBlockDelta'];
        const d = e.delta ?? {};
        const out: StreamEvent[] = [];
        if (d.text) out.push({ type: 'text', text: d.text });
        if (d.toolUse?.input) out.push({ type: 'tool_call_args', key: e.contentBlockIndex, delta: d.toolUse.input });
        if (d.reasoningContent?.text) out.push({ type: 'thinking', text: d.reasoningContent.text });
        if (d.reasoningContent?.signature) out.push({ type: 'thinking_signature', signature: d.reasoningContent.signature, family: 'anthropic' });
        if (d.reasoningContent?.redactedContent) out.push({ type: 'redacted_thinking', data: d.reasoningContent.redactedContent });
        return out;
      }
      case 'messageStop': {
        this.stopped = true;
        const e = payload as unknown as ConverseStreamEvents['messageStop'];
        return [{ type: 'finish', reason: fromConverseStop(e.stopReason) }];
      }
      case 'metadata': {
        this.done = true;
        const e = payload as unknown as ConverseStreamEvents['metadata'];
        return e.usage ? [{ type: 'usage', usage: converseUsageToUsage(e.usage) }] : [];
      }
      default:
        return [];
    }
  }

  get complete(): boolean {
    return this.done;
  }
}
