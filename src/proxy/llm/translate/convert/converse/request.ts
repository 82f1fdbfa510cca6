/** Canonical request → Bedrock Converse request (the model id travels in the URL path). */
import type { ImageSource, Part, Request } from '../../canonical.ts';
import type { ConverseContentBlock, ConverseImageFormat, ConverseMessage, ConverseRequest, ConverseToolResultContent } from '../../formats/bedrock.ts';
import { TranslationError } from '../../errors.ts';
import { compact, effortToBudget, parseArguments } from '../shared.ts';
import { replayableSignature } from '../signatures.ts';
import type { ToolNameMap } from '../tool-names.ts';

const CACHE_POINT = { cachePoint: { type: 'default' as const } };

export function writeConverseRequest(req: Request, names: ToolNameMap): ConverseRequest {
  const messages: ConverseMessage[] = [];
  for (const m of req.messages) {
    const content = m.parts.flatMap((p) => writeBlock(p, names));
    if (content.length) messages.push({ role: m.role, content });
  }
  const out: ConverseRequest = { messages };
  if (req.system.length || req.outputFormat) {
    const system: NonNullable<ConverseRequest['system']> = [];
    for (const s of req.system) {
      system.push({ text: s.text });
      if (s.cache) system.push(CACHE_POINT);
    }
    // Converse has no response_format: state the contract in the system prompt.
    if (req.outputFormat) {
      system.push({ text: req.outputFormat.type === 'json_schema'
        ? `Respond only with a JSON value that conforms to this JSON Schema: ${JSON.stringify(req.outputFormat.schema)}`
        : 'Respond only with a valid JSON object.' });
    }
    out.system = system;
  }
  const inference = compact({ maxTokens: req.maxTokens, temperature: req.temperature, topP: req.topP, stopSequences: req.stop?.length ? [...req.stop] : undefined });
  if (Object.keys(inference).length) out.inferenceConfig = inference;
  // Converse rejects toolUse/toolResult history without a toolConfig: declare the tools the history used.
  const tools = req.tools?.length ? req.tools : historyTools(req);
  if (tools.length) {
    const c = req.tools?.length ? req.toolChoice : undefined;
    out.toolConfig = compact({
      tools: tools.map((t) => ({ toolSpec: compact({ name: names.upstream(t.name), description: t.description, inputSchema: { json: { ...t.parameters } } }) })),
      // Converse has no "none": the tools stay declared (history may reference them) and the model decides.
      toolChoice: c === undefined || c === 'none' ? undefined : c === 'auto' ? { auto: {} } : c === 'required' ? { any: {} } : { tool: { name: names.upstream(c.name) } },
    });
  }
  // Model-specific knobs (Anthropic models on Bedrock) go through additionalModelRequestFields.
  const extra: Record<string, unknown> = {};
  const budget = req.reasoning?.disabled ? undefined : req.reasoning?.budgetTokens ?? (req.reasoning?.effort ? effortToBudget(req.reasoning.effort) : undefined);
  if (budget) extra.thinking = { type: 'enabled', budget_tokens: budget };
  if (req.topK !== undefined) extra.top_k = req.topK;
  if (Object.keys(extra).length) out.additionalModelRequestFields = extra;
  return out;
}

function historyTools(req: Request): { name: string; description?: string; parameters: Record<string, unknown> }[] {
  const names = new Set<string>();
  for (const m of req.messages) for (const p of m.parts) if (p.type === 'tool_call') names.add(p.name);
  return [...names].map((name) => ({ name, parameters: { type: 'object' } }));
}

function writeBlock(p: Part, names: ToolNameMap): ConverseContentBlock[] {
  switch (p.type) {
    case 'text': return p.cache ? [{ text: p.text }, CACHE_POINT] : [{ text: p.text }];
    case 'image': return [{ image: writeImage(p.source) }];
    case 'tool_call': return [{ toolUse: { toolUseId: p.id, name: names.upstream(p.name), input: parseArguments(p.arguments) } }];
    case 'tool_result': return [{ toolResult: compact({
      toolUseId: p.toolCallId,
      content: p.content.length ? p.content.map((c): ConverseToolResultContent => (c.type === 'text' ? { text: c.text } : { image: writeImage(c.source) })) : [{ text: '' }],
      status: p.isError ? 'error' as const : undefined,
    }) }];
    // Only reasoning signed by Claude (on Bedrock or Anthropic: one family) can be replayed; unsigned
    // text and other vendors' signatures are dropped.
    case 'thinking': {
      const signature = replayableSignature(p, 'anthropic');
      return signature && p.text ? [{ reasoningContent: { reasoningText: { text: p.text, signature } } }] : [];
    }
    case 'redacted_thinking': return [{ reasoningContent: { redactedContent: p.data } }];
    case 'web_search': return [];
  }
}

function writeImage(src: ImageSource): { format: ConverseImageFormat; source: { bytes: string } } {
  if (src.kind === 'url') throw new TranslationError('Bedrock Converse accepts images only as base64 data, not URLs', 400, 'messages');
  const format = src.mediaType.replace(/^image\//, '');
  if (format !== 'png' && format !== 'jpeg' && format !== 'gif' && format !== 'webp') {
    throw new TranslationError(`image type ${src.mediaType} is not supported by Bedrock Converse`, 400, 'messages');
  }
  return { format, source: { bytes: src.data } };
}
