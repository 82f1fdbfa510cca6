/**
 * Responses as an upstream format (custom servers that speak only Responses): canonical
 * request → Responses request, Responses response → canonical.
 */
import type { FinishReason, Part, Request, Response } from '../../canonical.ts';
import type { ResponsesInputContent, ResponsesInputItem, ResponsesRequest, ResponsesResponse } from '../../formats/openai-responses.ts';
import { makeUsage, type Usage } from '../../usage.ts';
import { compact, imageToUrl, toolResultText } from '../shared.ts';
import { REDACTED_PREFIX } from './response.ts';
import { clientThinking } from '../signatures.ts';

export function writeResponsesRequest(req: Request): ResponsesRequest {
  const input: ResponsesInputItem[] = [];
  for (const m of req.messages) {
    if (m.role === 'user') {
      for (const p of m.parts) if (p.type === 'tool_result') input.push({ type: 'function_call_output', call_id: p.toolCallId, output: toolResultText(p.content) });
      const content = m.parts.flatMap((p): ResponsesInputContent[] => (p.type === 'text' ? [{ type: 'input_text', text: p.text }] : p.type === 'image' ? [{ type: 'input_image', image_url: imageToUrl(p.source) }] : []));
      if (content.length) input.push({ role: 'user', content });
      continue;
    }
    for (const p of m.parts) {
      // Reasoning items need the provider's own item id to be replayed; without it they are left out.
      if (p.type === 'text') input.push({ role: 'assistant', content: [{ type: 'output_text', text: p.text }] });
      else if (p.type === 'tool_call') input.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments });
    }
  }
  const f = req.outputFormat;
  return compact({
    model: req.model,
    input,
    instructions: req.system.length ? req.system.map((s) => s.text).join('\n\n') : undefined,
    // Responses makes function tools strict by default; chat and messages clients never asked for that.
    tools: req.tools?.map((t) => ({ type: 'function' as const, name: t.name, description: t.description ?? null, parameters: { ...t.parameters }, strict: t.strict ?? false })),
    tool_choice: req.toolChoice === undefined || typeof req.toolChoice === 'string' ? req.toolChoice : { type: 'function' as const, name: req.toolChoice.name },
    parallel_tool_calls: req.tools?.length ? req.parallelToolCalls : undefined,
    max_output_tokens: req.maxTokens,
    temperature: req.temperature,
    top_p: req.topP,
    text: f ? { format: f.type === 'json_schema' ? { type: 'json_schema' as const, name: f.name, schema: { ...f.schema }, strict: f.strict ?? null } : { type: 'json_object' as const } } : undefined,
    reasoning: req.reasoning?.effort ? { effort: req.reasoning.effort } : undefined,
    user: req.user,
    stream: req.stream || undefined,
  });
}

export function responsesUsageToUsage(u: NonNullable<ResponsesResponse['usage']>): Usage {
  return makeUsage({
    inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0, totalTokens: u.total_tokens,
    cachedInputTokens: u.input_tokens_details?.cached_tokens, reasoningTokens: u.output_tokens_details?.reasoning_tokens,
  });
}

export function readResponsesResponse(body: ResponsesResponse): Response {
  const parts: Part[] = [];
  for (const item of body.output ?? []) {
    if (item.type === 'message') {
      for (const c of item.content) parts.push({ type: 'text', text: c.type === 'output_text' ? c.text : c.refusal });
    } else if (item.type === 'function_call') {
      parts.push({ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments });
    } else if (item.type === 'reasoning') {
      const enc = item.encrypted_content ?? undefined;
      parts.push(enc?.startsWith(REDACTED_PREFIX)
        ? { type: 'redacted_thinking', data: enc.slice(REDACTED_PREFIX.length) }
        : clientThinking(item.summary.map((s) => s.text).join('\n'), enc, 'openai'));
    }
  }
  const reason = body.incomplete_details?.reason;
  const finishReason: FinishReason = reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content_filter' : parts.some((p) => p.type === 'tool_call') ? 'tool_calls' : 'stop';
  return compact({
    id: body.id,
    model: body.model,
    parts,
    finishReason,
    usage: body.usage ? responsesUsageToUsage(body.usage) : undefined,
  });
}
