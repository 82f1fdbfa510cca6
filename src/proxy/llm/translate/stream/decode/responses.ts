/**
 * OpenAI Responses stream events → canonical events. Used for Responses upstreams behind other
 * client formats, and on the passthrough path for usage and completion.
 */
import type { StreamEvent } from '../../canonical.ts';
import type { ResponsesOutputItem, ResponsesResponse } from '../../formats/openai-responses.ts';
import { responsesUsageToUsage } from '../../convert/responses/upstream.ts';
import { SSEDecoder } from './decoder.ts';

interface ResponsesEvent {
  type?: string;
  response?: ResponsesResponse;
  item?: ResponsesOutputItem;
  output_index?: number;
  delta?: string;
  message?: string;
  code?: string;
}

export class ResponsesStreamDecoder extends SSEDecoder {
  private sawCall = false;

  protected handle(_event: string | undefined, data: unknown): StreamEvent[] {
    const e = data as ResponsesEvent;
    switch (e.type) {
      case 'response.created':
        return [{ type: 'start', id: e.response?.id, model: e.response?.model }];
      case 'response.output_item.added':
        if (e.item?.type === 'function_call') {
          this.sawCall = true;
          return [{ type: 'tool_call_start', key: e.output_index ?? 0, id: e.item.call_id, name: e.item.name }];
        }
        return [];
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return e.delta ? [{ type: 'text', text: e.delta }] : [];
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return e.delta ? [{ type: 'thinking', text: e.delta }] : [];
      case 'response.function_call_arguments.delta':
        return e.delta ? [{ type: 'tool_call_args', key: e.output_index ?? 0, delta: e.delta }] : [];
      case 'response.output_item.done':
        return e.item?.type === 'reasoning' && e.item.encrypted_content ? [{ type: 'thinking_signature', signature: e.item.encrypted_content, family: 'openai' }] : [];
      case 'response.completed':
      case 'response.incomplete': {
        this.complete = true;
        const reason = e.response?.incomplete_details?.reason;
        const out: StreamEvent[] = [{ type: 'finish', reason: reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : this.sawCall ? 'tool_calls' : 'stop' }];
        if (e.response?.usage) out.push({ type: 'usage', usage: responsesUsageToUsage(e.response.usage) });
        return out;
      }
      case 'response.failed':
        return [{ type: 'error', status: 500, errorType: e.response?.error?.code ?? 'server_error', message: e.response?.error?.message ?? 'upstream response failed' }];
      case 'error':
        return [{ type: 'error', status: 500, errorType: e.code ?? 'server_error', message: e.message ?? 'upstream error' }];
      default:
        return [];
    }
  }
}
