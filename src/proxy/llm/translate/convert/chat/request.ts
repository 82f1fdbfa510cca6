/** OpenAI chat completions request ⇄ canonical request. */
import type { OutputFormat, Part, Request, ToolChoice, WebSearch } from '../../canonical.ts';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolChoice } from '../../formats/openai-chat.ts';
import { TranslationError } from '../../errors.ts';
import { MessageList } from '../messages-builder.ts';
import { asArray, compact, imageFromUrl, imageToUrl, requireObject, toolResultText } from '../shared.ts';
import { clientThinking } from '../signatures.ts';

export function readChatRequest(raw: unknown): Request {
  const body = requireObject(raw) as ChatRequest;
  if (!Array.isArray(body.messages)) throw new TranslationError('`messages` must be an array', 400, 'messages');
  const system: { text: string }[] = [];
  const list = new MessageList();
  for (const m of body.messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push({ text: contentText(m.content) });
        break;
      case 'user':
        list.push('user', contentParts(m.content));
        break;
      case 'tool':
        list.push('user', [{ type: 'tool_result', toolCallId: m.tool_call_id, content: contentParts(m.content) as { type: 'text'; text: string }[] }]);
        break;
      case 'assistant':
        list.push('assistant', assistantParts(m));
        break;
      default:
        throw new TranslationError(`unsupported message role ${JSON.stringify((m as { role: unknown }).role)}`, 400, 'messages');
    }
  }
  return {
    model: String(body.model ?? ''),
    system,
    messages: list.messages,
    tools: body.tools?.filter((t) => t.type === 'function').map((t) => compactTool(t)),
    toolChoice: body.tool_choice === undefined ? undefined : readToolChoice(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls,
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stop: body.stop === undefined ? undefined : asArray(body.stop),
    stream: body.stream === true,
    outputFormat: readResponseFormat(body.response_format),
    reasoning: body.reasoning_effort ? { effort: body.reasoning_effort } : undefined,
    user: body.user,
    webSearch: body.web_search_options ? readWebSearchOptions(body.web_search_options) : undefined,
  };
}

/** Chat's `web_search_options` (OpenAI's search models) as a canonical search: the provider's own where it has one. */
function readWebSearchOptions(o: unknown): WebSearch {
  const approx = (o as { user_location?: { approximate?: Record<string, unknown> } } | null)?.user_location?.approximate;
  if (!approx) return {};
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const loc = compact({ city: str(approx.city), region: str(approx.region), country: str(approx.country), timezone: str(approx.timezone) });
  return Object.keys(loc).length ? { userLocation: loc } : {};
}

function compactTool(t: ChatTool) {
  return compact({ name: t.function.name, description: t.function.description, parameters: t.function.parameters ?? { type: 'object', properties: {} }, strict: t.function.strict });
}

function contentText(c: string | ChatContentPart[] | null | undefined): string {
  if (c == null) return '';
  if (typeof c === 'string') return c;
  return c.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function contentParts(c: string | ChatContentPart[] | null | undefined): Part[] {
  if (c == null) return [];
  if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }];
  return c.map((p): Part => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'image_url') return { type: 'image', source: imageFromUrl(p.image_url.url) };
    if (p.type === 'refusal') return { type: 'text', text: p.refusal };
    throw new TranslationError(`content part type ${JSON.stringify(p.type)} cannot be translated for this provider`, 400, 'messages');
  });
}

function assistantParts(m: Extract<ChatMessage, { role: 'assistant' }>): Part[] {
  const parts: Part[] = [];
  if (m.thinking_blocks?.length) {
    for (const b of m.thinking_blocks) {
      // thinking_blocks is LiteLLM's convention for Claude's reasoning: unmarked signatures are Anthropic's.
      parts.push(b.type === 'thinking' ? clientThinking(b.thinking, b.signature, 'anthropic') : { type: 'redacted_thinking', data: b.data });
    }
  } else if (m.reasoning_content) {
    parts.push({ type: 'thinking', text: m.reasoning_content });
  }
  parts.push(...contentParts(m.content));
  for (const call of m.tool_calls ?? []) {
    // Typed by the schema, but a client's JSON is not: OpenAI answers 400 for a non-string here,
    // and the converters read both as strings.
    if (typeof call?.function?.name !== 'string' || typeof call.function.arguments !== 'string') {
      throw new TranslationError('an assistant message\'s tool_calls[].function needs a string name and a string arguments');
    }
    const sig = call.extra_content?.google?.thought_signature;
    if (sig) parts.push(clientThinking('', sig, 'gemini'));
    parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return parts;
}

function readToolChoice(c: ChatToolChoice): ToolChoice {
  if (typeof c === 'string') return c;
  return { name: c.function.name };
}

function readResponseFormat(f: ChatRequest['response_format']): OutputFormat | undefined {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  return compact({ type: 'json_schema' as const, name: f.json_schema.name, schema: f.json_schema.schema ?? {}, strict: f.json_schema.strict });
}

export interface ChatWriteOptions {
  /** OpenAI proper wants `max_completion_tokens` (reasoning models reject `max_tokens`); many compatible servers only know `max_tokens`. */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

export function writeChatRequest(req: Request, opts: ChatWriteOptions): ChatRequest {
  const messages: ChatMessage[] = req.system.map((s) => ({ role: 'system', content: s.text }));
  for (const m of req.messages) {
    if (m.role === 'assistant') {
      const text = m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
      const calls = m.parts.filter((p) => p.type === 'tool_call');
      messages.push(compact({
        role: 'assistant' as const,
        content: text === '' && calls.length ? null : text,
        tool_calls: calls.length ? calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) : undefined,
      }));
      continue;
    }
    // Tool results become `tool` messages and must directly follow the assistant turn.
    for (const p of m.parts) {
      if (p.type === 'tool_result') messages.push({ role: 'tool', tool_call_id: p.toolCallId, content: toolResultText(p.content) });
    }
    const rest = m.parts.filter((p) => p.type === 'text' || p.type === 'image');
    if (rest.length === 0) continue;
    const onlyText = rest.every((p) => p.type === 'text');
    messages.push({
      role: 'user',
      content: onlyText
        ? rest.map((p) => (p.type === 'text' ? p.text : '')).join('\n')
        : rest.map((p): ChatContentPart => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: imageToUrl((p as Extract<Part, { type: 'image' }>).source) } })),
    });
  }
  const out: ChatRequest = { model: req.model, messages };
  if (req.maxTokens !== undefined) out[opts.maxTokensField] = req.maxTokens;
  return compact(Object.assign(out, {
    temperature: req.temperature,
    top_p: req.topP,
    stop: req.stop?.length ? [...req.stop] : undefined,
    tools: req.tools?.map((t): ChatTool => ({ type: 'function', function: compact({ name: t.name, description: t.description, parameters: { ...t.parameters }, strict: t.strict }) })),
    tool_choice: writeToolChoice(req.toolChoice),
    parallel_tool_calls: req.tools?.length ? req.parallelToolCalls : undefined,
    response_format: writeResponseFormat(req.outputFormat),
    // Only an effort the client chose: a budget-derived one would make non-reasoning models reject the request.
    reasoning_effort: req.reasoning?.effort,
    user: req.user,
    stream: req.stream || undefined,
    // The gateway needs usage from every stream to count tokens.
    stream_options: req.stream ? { include_usage: true } : undefined,
  }));
}

function writeToolChoice(c: ToolChoice | undefined): ChatToolChoice | undefined {
  if (c === undefined || typeof c === 'string') return c;
  return { type: 'function', function: { name: c.name } };
}

function writeResponseFormat(f: OutputFormat | undefined): ChatRequest['response_format'] {
  if (!f) return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', json_schema: compact({ name: f.name, schema: { ...f.schema }, strict: f.strict }) };
}
