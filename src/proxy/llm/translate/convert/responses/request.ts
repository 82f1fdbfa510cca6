/** OpenAI Responses request → canonical request (Responses is a client format; providerA takes it natively). */
import type { OutputFormat, Part, Request, ToolChoice, WebSearch } from '../../canonical.ts';
import type { ResponsesInputContent, ResponsesInputItem, ResponsesRequest, ResponsesToolChoice } from '../../formats/openai-responses.ts';
import { TranslationError } from '../../errors.ts';
import { MessageList } from '../messages-builder.ts';
import { compact, imageFromUrl, requireObject } from '../shared.ts';
import { readHostedTool } from './hosted-tools.ts';
import { REDACTED_PREFIX } from './response.ts';
import { clientThinking } from '../signatures.ts';

export function readResponsesRequest(raw: unknown): Request {
  const body = requireObject(raw) as ResponsesRequest;
  // The gateway keeps no conversation state; only the provider that stored the response can resolve it.
  if (body.previous_response_id) {
    throw new TranslationError('`previous_response_id` needs a provider that stores responses; send the full input instead', 400, 'previous_response_id');
  }
  const conversation = (body as { conversation?: unknown }).conversation;
  if (conversation !== undefined && conversation !== null) {
    throw new TranslationError('`conversation` needs a provider that stores conversations; send the full input instead', 400, 'conversation');
  }
  const system: { text: string }[] = [];
  if (body.instructions) system.push({ text: body.instructions });
  const list = new MessageList();
  const items: ResponsesInputItem[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
  for (const item of items) readItem(item, system, list);
  let webSearch: WebSearch | undefined;
  const tools = (body.tools ?? []).flatMap((t) => {
    if (t.type !== 'function') {
      webSearch = readHostedTool(t as Readonly<Record<string, unknown>>);
      return [];
    }
    const f = t as Extract<ResponsesRequest['tools'], unknown[]>[number] & { name: string; description?: string | null; parameters?: Record<string, unknown> | null; strict?: boolean | null };
    return [compact({ name: f.name, description: f.description ?? undefined, parameters: f.parameters ?? { type: 'object', properties: {} }, strict: f.strict ?? undefined })];
  });
  const effort = body.reasoning?.effort ?? undefined;
  return {
    model: String(body.model ?? ''),
    system,
    messages: list.messages,
    tools: tools.length ? tools : undefined,
    ...(webSearch ? { webSearch } : {}),
    toolChoice: body.tool_choice === undefined ? undefined : readToolChoice(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls,
    maxTokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stream: body.stream === true,
    outputFormat: readFormat(body.text?.format),
    reasoning: effort ? { effort } : undefined,
    user: body.user,
  };
}

function readItem(item: ResponsesInputItem, system: { text: string }[], list: MessageList): void {
  const type = item.type ?? 'message';
  if (type === 'message') {
    const m = item as Extract<ResponsesInputItem, { role: string }>;
    const parts = contentParts(m.content);
    if (m.role === 'system' || m.role === 'developer') system.push({ text: parts.map((p) => (p.type === 'text' ? p.text : '')).join('') });
    else list.push(m.role, parts);
  } else if (item.type === 'function_call') {
    list.push('assistant', [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments }]);
  } else if (item.type === 'function_call_output') {
    const content = typeof item.output === 'string' ? [{ type: 'text' as const, text: item.output }] : contentParts(item.output).filter((p) => p.type === 'text' || p.type === 'image');
    list.push('user', [{ type: 'tool_result', toolCallId: item.call_id, content }]);
  } else if ((type as string) === 'web_search_call') {
    // The record of a search that already ran (its findings are in the assistant message that follows): nothing to replay.
  } else if (item.type === 'reasoning') {
    const text = item.summary.map((s) => s.text).join('\n');
    const enc = item.encrypted_content ?? undefined;
    list.push('assistant', [enc?.startsWith(REDACTED_PREFIX)
      ? { type: 'redacted_thinking', data: enc.slice(REDACTED_PREFIX.length) }
      : clientThinking(text, enc, 'openai')]);
  } else {
    throw new TranslationError(`input item type ${JSON.stringify(type)} cannot be translated for this provider`, 400, 'input');
  }
}

function contentParts(c: string | ResponsesInputContent[]): (Part & { type: 'text' | 'image' })[] {
  if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }];
  return c.map((p) => {
    if (p.type === 'input_text' || p.type === 'output_text') return { type: 'text' as const, text: p.text };
    if (p.type === 'refusal') return { type: 'text' as const, text: p.refusal };
    if (p.type === 'input_image' && p.image_url) return { type: 'image' as const, source: imageFromUrl(p.image_url) };
    throw new TranslationError(`content type ${JSON.stringify(p.type)} cannot be translated for this provider`, 400, 'input');
  });
}

function readToolChoice(c: ResponsesToolChoice): ToolChoice {
  if (typeof c === 'string') return c;
  // A hosted tool forced by type (`{type: "web_search"}`…) has no portable equivalent: say so instead of loosening it to auto.
  if (c.type !== 'function') throw new TranslationError(`tool_choice of type ${JSON.stringify(c.type)} cannot be translated for this provider; use "auto", "required" or a function`, 400, 'tool_choice');
  return { name: c.name };
}

function readFormat(f: NonNullable<ResponsesRequest['text']>['format']): OutputFormat | undefined {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  return compact({ type: 'json_schema' as const, name: f.name, schema: f.schema, strict: f.strict ?? undefined });
}
