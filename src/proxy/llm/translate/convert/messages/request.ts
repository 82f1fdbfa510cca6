/** Anthropic Messages request ⇄ canonical request. */
import type { ImageSource, Part, Request, Tool, ToolChoice, WebSearch } from '../../canonical.ts';
import type { MessagesContentBlock, MessagesImageSource, MessagesRequest, MessagesTool, MessagesToolChoice } from '../../formats/anthropic.ts';
import { TranslationError } from '../../errors.ts';
import { MessageList } from '../messages-builder.ts';
import { compact, effortToBudget, parseArguments, requireObject, stringifyArguments } from '../shared.ts';
import { clientThinking, replayableSignature } from '../signatures.ts';
import type { ToolNameMap } from '../tool-names.ts';

/** Anthropic requires max_tokens; chat and responses clients may omit it. */
export const DEFAULT_MAX_TOKENS = 4096;

export function readMessagesRequest(raw: unknown): Request {
  const body = requireObject(raw) as MessagesRequest;
  if (!Array.isArray(body.messages)) throw new TranslationError('`messages` must be an array', 400, 'messages');
  const list = new MessageList();
  for (const m of body.messages) {
    if (m.role !== 'user' && m.role !== 'assistant') throw new TranslationError(`unsupported message role ${JSON.stringify(m.role)}`, 400, 'messages');
    if (typeof m.content === 'string') {
      list.push(m.role, [{ type: 'text', text: m.content }]);
      continue;
    }
    const parts: Part[] = [];
    for (const b of m.content) {
      // Searches Anthropic already ran in earlier turns (their findings are in the text): nothing to replay elsewhere.
      if (b.type === 'server_tool_use' || b.type === 'web_search_tool_result') continue;
      parts.push(readBlock(b));
    }
    list.push(m.role, parts);
  }
  const system = body.system === undefined ? [] : typeof body.system === 'string'
    ? [{ text: body.system }]
    : body.system.map((b) => compact({ text: b.text, cache: b.cache_control ? true : undefined }));
  const tc = body.tool_choice;
  let webSearch: WebSearch | undefined;
  const tools: Tool[] = [];
  for (const t of body.tools ?? []) {
    if (typeof t.type === 'string' && t.type.startsWith('web_search_')) webSearch = readWebSearchTool(t);
    else tools.push(compact({ name: t.name, description: t.description, parameters: t.input_schema ?? { type: 'object', properties: {} } }));
  }
  return {
    model: String(body.model ?? ''),
    system,
    messages: list.messages,
    tools: body.tools && (tools.length > 0 || !webSearch) ? tools : undefined,
    webSearch,
    toolChoice: tc ? readToolChoice(tc) : undefined,
    parallelToolCalls: tc && 'disable_parallel_tool_use' in tc && tc.disable_parallel_tool_use ? false : undefined,
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    stop: body.stop_sequences,
    stream: body.stream === true,
    reasoning: body.thinking?.type === 'enabled' ? { budgetTokens: body.thinking.budget_tokens } : body.thinking?.type === 'disabled' ? { disabled: true } : undefined,
    user: body.metadata?.user_id,
  };
}

/** Anthropic's web search server tool as a canonical search (for providers with their own: Gemini's Google Search). */
function readWebSearchTool(t: MessagesTool): WebSearch {
  const raw = t as unknown as { allowed_domains?: string[]; blocked_domains?: string[]; user_location?: Record<string, unknown> };
  if (raw.blocked_domains?.length) throw new TranslationError('web search `blocked_domains` cannot be honoured by this provider', 400, 'tools');
  const loc = raw.user_location;
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const userLocation = loc ? compact({ city: str(loc.city), region: str(loc.region), country: str(loc.country), timezone: str(loc.timezone) }) : undefined;
  return compact({
    allowedDomains: raw.allowed_domains?.length ? raw.allowed_domains.map(String) : undefined,
    userLocation: userLocation && Object.keys(userLocation).length ? userLocation : undefined,
  });
}

function readImage(s: MessagesImageSource): ImageSource {
  return s.type === 'base64' ? { kind: 'base64', mediaType: s.media_type, data: s.data } : { kind: 'url', url: s.url };
}

export function readBlock(b: MessagesContentBlock, names?: ToolNameMap): Part {
  switch (b.type) {
    case 'text': return compact({ type: 'text' as const, text: b.text, cache: b.cache_control ? true : undefined });
    case 'image': return { type: 'image', source: readImage(b.source) };
    case 'tool_use': return { type: 'tool_call', id: b.id, name: names ? names.client(b.name) : b.name, arguments: stringifyArguments(b.input) };
    case 'tool_result': {
      const content = b.content === undefined ? [] : typeof b.content === 'string'
        ? [{ type: 'text' as const, text: b.content }]
        : b.content.map((c) => (c.type === 'text' ? { type: 'text' as const, text: c.text } : { type: 'image' as const, source: readImage(c.source) }));
      return compact({ type: 'tool_result' as const, toolCallId: b.tool_use_id, content, isError: b.is_error });
    }
    case 'thinking': return clientThinking(b.thinking, b.signature, 'anthropic');
    case 'redacted_thinking': return { type: 'redacted_thinking', data: b.data };
    default:
      throw new TranslationError(`content block type ${JSON.stringify((b as { type: unknown }).type)} cannot be translated for this provider`, 400, 'messages');
  }
}

function readToolChoice(c: MessagesToolChoice): ToolChoice {
  if (c.type === 'any') return 'required';
  if (c.type === 'tool') return { name: c.name };
  return c.type;
}

function writeImage(s: ImageSource): MessagesImageSource {
  return s.kind === 'base64' ? { type: 'base64', media_type: s.mediaType, data: s.data } : { type: 'url', url: s.url };
}

export function writeBlock(p: Part, names?: ToolNameMap): MessagesContentBlock | undefined {
  switch (p.type) {
    case 'text': return p.cache ? { type: 'text', text: p.text, cache_control: { type: 'ephemeral' } } : { type: 'text', text: p.text };
    case 'image': return { type: 'image', source: writeImage(p.source) };
    case 'tool_call': return { type: 'tool_use', id: p.id, name: names ? names.upstream(p.name) : p.name, input: parseArguments(p.arguments) };
    case 'tool_result': return compact({
      type: 'tool_result' as const,
      tool_use_id: p.toolCallId,
      content: p.content.length ? p.content.map((c) => (c.type === 'text' ? { type: 'text' as const, text: c.text } : { type: 'image' as const, source: writeImage(c.source) })) : undefined,
      is_error: p.isError,
    });
    // Anthropic rejects thinking without a valid signature: unsigned reasoning (from a chat client)
    // and reasoning signed by another vendor (Gemini, OpenAI) are dropped.
    case 'thinking': {
      const signature = replayableSignature(p, 'anthropic');
      return signature && p.text ? { type: 'thinking', thinking: p.text, signature } : undefined;
    }
    case 'redacted_thinking': return { type: 'redacted_thinking', data: p.data };
    // A search that already ran (its findings are in the text): nothing to replay.
    case 'web_search': return undefined;
  }
}

/** `names` sanitises tool names: Anthropic, like Bedrock, allows only [a-zA-Z0-9_-]{1,64}. */
export function writeMessagesRequest(req: Request, names: ToolNameMap): MessagesRequest {
  const messages = req.messages
    .map((m) => ({ role: m.role, content: m.parts.map((p) => writeBlock(p, names)).filter((b) => b !== undefined) }))
    .filter((m) => m.content.length > 0);
  const tc = writeToolChoice(req.toolChoice, req.parallelToolCalls, names);
  const thinking = req.reasoning?.disabled
    ? undefined
    : req.reasoning?.budgetTokens ? { type: 'enabled' as const, budget_tokens: req.reasoning.budgetTokens }
    : req.reasoning?.effort ? { type: 'enabled' as const, budget_tokens: effortToBudget(req.reasoning.effort) }
    : undefined;
  let maxTokens = req.maxTokens ?? DEFAULT_MAX_TOKENS;
  // Anthropic requires max_tokens > budget_tokens.
  if (thinking && maxTokens <= thinking.budget_tokens) maxTokens = thinking.budget_tokens + DEFAULT_MAX_TOKENS;
  let system: MessagesRequest['system'];
  if (req.system.length === 1 && !req.system[0].cache) system = req.system[0].text;
  else if (req.system.length) system = req.system.map((s) => (s.cache ? { type: 'text' as const, text: s.text, cache_control: { type: 'ephemeral' as const } } : { type: 'text' as const, text: s.text }));
  if (req.outputFormat) {
    // Messages has no response_format: state the contract in the system prompt instead.
    const instruction = req.outputFormat.type === 'json_schema'
      ? `Respond only with a JSON value that conforms to this JSON Schema: ${JSON.stringify(req.outputFormat.schema)}`
      : 'Respond only with a valid JSON object.';
    system = typeof system === 'string' ? `${system}\n\n${instruction}` : system ? [...system, { type: 'text', text: instruction }] : instruction;
  }
  return compact({
    model: req.model,
    messages,
    max_tokens: maxTokens,
    system,
    // Anthropic rejects temperature/top_p other than defaults while thinking is on.
    temperature: thinking ? undefined : req.temperature,
    top_p: thinking ? undefined : req.topP,
    top_k: thinking ? undefined : req.topK,
    stop_sequences: req.stop?.length ? [...req.stop] : undefined,
    tools: req.tools?.map((t) => compact({ name: names.upstream(t.name), description: t.description, input_schema: { ...t.parameters } })),
    tool_choice: req.tools?.length || tc?.type === 'none' ? tc : undefined,
    thinking,
    metadata: req.user ? { user_id: req.user } : undefined,
    stream: req.stream || undefined,
  });
}

function writeToolChoice(c: ToolChoice | undefined, parallel: boolean | undefined, names: ToolNameMap): MessagesToolChoice | undefined {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (c === undefined) return parallel === false ? { type: 'auto', ...noParallel } : undefined;
  if (c === 'none') return { type: 'none' };
  if (c === 'auto') return { type: 'auto', ...noParallel };
  if (c === 'required') return { type: 'any', ...noParallel };
  return { type: 'tool', name: names.upstream(c.name), ...noParallel };
}
